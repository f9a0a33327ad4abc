// A minimal Go gRPC world generator: the reference a FlapLab hop is compared with in `pnpm bench`.
// It serves flaplab.worldgen.v1.WorldGenService/GenerateWorld over gRPC h2c with grpc-go, and
// generates worlds as FlappyGo's backend does (math/rand v1 seeded with the world seed, int32
// arithmetic), so a seed gives the pipes FlapLab's worldgen gives. Messages are read and written
// with protobuf-go's wire functions (no generated code). It checks no credential.
//
// Usage: go-worldgen-server [-addr 127.0.0.1:0]; prints "listening <port>" on stdout, then serves
// until stdin closes.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand"
	"net"
	"os"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protowire"
)

// rawMessage is a message's bytes, passed through the codec untouched.
type rawMessage struct{ b []byte }

type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) {
	m, ok := v.(*rawMessage)
	if !ok {
		return nil, fmt.Errorf("unexpected message type %T", v)
	}
	return m.b, nil
}

func (rawCodec) Unmarshal(data []byte, v any) error {
	m, ok := v.(*rawMessage)
	if !ok {
		return fmt.Errorf("unexpected message type %T", v)
	}
	m.b = append(m.b[:0], data...)
	return nil
}

func (rawCodec) Name() string { return "proto" }

const pipesPerWorld = 100

type request struct {
	width, height int32
	seed          int64
	hasSeed       bool
}

// parseViewport reads a Viewport message: width = 1, height = 2.
func parseViewport(b []byte, r *request) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if typ == protowire.VarintType && (num == 1 || num == 2) {
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			if num == 1 {
				r.width = int32(v)
			} else {
				r.height = int32(v)
			}
			b = b[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return protowire.ParseError(m)
		}
		b = b[m:]
	}
	return nil
}

// parseRequest reads a GenerateWorldRequest: game_id = 1, viewport = 2, seed = 3.
func parseRequest(b []byte) (request, error) {
	r := request{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return r, protowire.ParseError(n)
		}
		b = b[n:]
		switch {
		case num == 2 && typ == protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return r, protowire.ParseError(m)
			}
			if err := parseViewport(v, &r); err != nil {
				return r, err
			}
			b = b[m:]
		case num == 3 && typ == protowire.VarintType:
			v, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return r, protowire.ParseError(m)
			}
			r.seed, r.hasSeed = int64(v), true
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return r, protowire.ParseError(m)
			}
			b = b[m:]
		}
	}
	return r, nil
}

type pipe struct{ start, height int32 }

// generate is FlappyGo's world generator (backend/world_gen/worldgen.go).
func generate(seed int64, w, h int32) (int32, []pipe) {
	r := rand.New(rand.NewSource(seed))
	gap := w/4 + r.Int31n(w/4)
	thresh := 2 * h / 3
	maxHeight := 1 * h / 3
	prevClear := "up"
	pipes := make([]pipe, 0, pipesPerWorld)
	for i := 0; i < pipesPerWorld; i++ {
		var start int32
		switch prevClear {
		case "center":
			start = h/9 + r.Int31n(thresh)
		case "bottom":
			start = 4*h/9 + r.Int31n(3*h/9)
		default:
			start = h/9 + r.Int31n(7*h/18)
		}
		switch {
		case start < h/3:
			prevClear = "up"
		case start > 2*h/3:
			prevClear = "bottom"
		default:
			prevClear = "center"
		}
		remaining := h - start
		var height int32
		switch {
		case remaining < thresh:
			height = 2*remaining/3 + r.Int31n(remaining/6)
		case remaining > maxHeight:
			height = remaining/4 + r.Int31n(remaining/4)
		default:
			height = remaining/2 + r.Int31n(remaining/2)
		}
		pipes = append(pipes, pipe{start, height})
	}
	return gap, pipes
}

func appendDouble(b []byte, num protowire.Number, v float64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.Fixed64Type)
	return protowire.AppendFixed64(b, math.Float64bits(v))
}

// encodeResponse writes GenerateWorldResponse{world = 1: World{seed = 1, viewport = 2, pipe_spacing = 3, pipes = 4}}.
func encodeResponse(seed int64, w, h int32, gap int32, pipes []pipe) []byte {
	var viewport []byte
	viewport = protowire.AppendTag(viewport, 1, protowire.VarintType)
	viewport = protowire.AppendVarint(viewport, uint64(w))
	viewport = protowire.AppendTag(viewport, 2, protowire.VarintType)
	viewport = protowire.AppendVarint(viewport, uint64(h))
	world := make([]byte, 0, 2048)
	world = protowire.AppendTag(world, 1, protowire.VarintType)
	world = protowire.AppendVarint(world, uint64(seed))
	world = protowire.AppendTag(world, 2, protowire.BytesType)
	world = protowire.AppendBytes(world, viewport)
	world = appendDouble(world, 3, float64(gap))
	var p []byte
	for _, x := range pipes {
		p = p[:0]
		p = appendDouble(p, 1, float64(x.start))
		p = appendDouble(p, 2, float64(x.height))
		world = protowire.AppendTag(world, 4, protowire.BytesType)
		world = protowire.AppendBytes(world, p)
	}
	out := protowire.AppendTag(make([]byte, 0, len(world)+8), 1, protowire.BytesType)
	return protowire.AppendBytes(out, world)
}

func generateWorld(_ any, _ context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
	in := &rawMessage{}
	if err := dec(in); err != nil {
		return nil, err
	}
	req, err := parseRequest(in.b)
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	if req.width < 4 || req.height < 9 {
		return nil, status.Errorf(codes.InvalidArgument, "viewport %dx%d is too small", req.width, req.height)
	}
	seed := req.seed
	if !req.hasSeed {
		seed = rand.Int63()
	}
	gap, pipes := generate(seed, req.width, req.height)
	return &rawMessage{encodeResponse(seed, req.width, req.height, gap, pipes)}, nil
}

var serviceDesc = grpc.ServiceDesc{
	ServiceName: "flaplab.worldgen.v1.WorldGenService",
	HandlerType: (*any)(nil),
	Methods:     []grpc.MethodDesc{{MethodName: "GenerateWorld", Handler: generateWorld}},
	Metadata:    "flaplab/worldgen/v1/worldgen.proto",
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "address to listen on")
	flag.Parse()
	lis, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server := grpc.NewServer(grpc.ForceServerCodec(rawCodec{}))
	server.RegisterService(&serviceDesc, nil)
	fmt.Printf("listening %d\n", lis.Addr().(*net.TCPAddr).Port)
	go func() {
		// Serves until stdin closes (the bench ends it so).
		_, _ = io.Copy(io.Discard, os.Stdin)
		server.Stop()
	}()
	if err := server.Serve(lis); err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// Command go-stream-clients plays the benchmark's games over the engine's WebSocket game stream, as
// bench/src/stream-clients.ts does with Node's ws, but with Go's gorilla/websocket: a client
// nobody here wrote, and one that costs the shared machine less CPU per frame than Node's.
//
// It answers the same requests as the Node clients ("open", "start", "reset", "stats", "close"),
// one JSON object per line: {"id":N,"body":{...}} on stdin, {"id":N,"ok":true,"result":{...}} or
// {"id":N,"ok":false,"error":"..."} on stdout. It exits when stdin closes.
//
// Each game: one WebSocket connection, one reading goroutine. The first ClientInput starts the
// game; a flap is sent when the frame before a flap tick arrives (the schedule comes with "open").
// On the "tcp" link (the loopback floor, bench/src/stream-floor.ts) each game is a plain TCP
// connection: one byte starts it, and its 18-byte messages are counted as frames.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/gorilla/websocket"
	"google.golang.org/protobuf/encoding/protowire"
)

// GameStreamMessage's oneof fields and Frame's tick (proto/flaplab/engine/v1/stream.proto).
const (
	fieldFrame   protowire.Number = 1
	fieldSummary protowire.Number = 2
	fieldAck     protowire.Number = 3
	fieldTick    protowire.Number = 1
)

type game struct {
	ID     string `json:"id"`
	Ticket string `json:"ticket"`
}

type request struct {
	Type        string  `json:"type"`
	Link        string  `json:"link"`
	URL         string  `json:"url"`
	Games       []game  `json:"games"`
	Concurrency int     `json:"concurrency"`
	FlapTicks   []int   `json:"flapTicks"`
	RampMs      float64 `json:"rampMs"`
}

type envelope struct {
	ID   int64   `json:"id"`
	Body request `json:"body"`
}

type reply struct {
	ID     int64  `json:"id"`
	OK     bool   `json:"ok"`
	Result any    `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

// percentiles is bench/src/hist.ts's Percentiles, in µs.
type percentiles struct {
	Samples int64    `json:"samples"`
	P50     *float64 `json:"p50"`
	P99     *float64 `json:"p99"`
	P999    *float64 `json:"p999"`
	Max     *float64 `json:"max"`
	Mean    *float64 `json:"mean"`
}

// stats is @flaplab/report-kit's latency Stats, in ms.
type stats struct {
	Samples int64    `json:"samples"`
	Min     *float64 `json:"min"`
	P10     *float64 `json:"p10"`
	Median  *float64 `json:"median"`
	Mean    *float64 `json:"mean"`
	P90     *float64 `json:"p90"`
	P99     *float64 `json:"p99"`
	P999    *float64 `json:"p99_9"`
	Max     *float64 `json:"max"`
}

// latency is an HdrHistogram of µs (1 µs to 60 s, 3 significant digits) with the exact min, max
// and mean beside it.
type latency struct {
	h        *hdrhistogram.Histogram
	n        int64
	sum      float64
	min, max float64
}

func newLatency() *latency { return &latency{h: hdrhistogram.New(1, 60_000_000, 3)} }

func (l *latency) record(us float64) {
	if !(us >= 0) {
		us = 0
	}
	v := int64(math.Round(us))
	if v < 1 {
		v = 1
	}
	if v > l.h.HighestTrackableValue() {
		v = l.h.HighestTrackableValue()
	}
	_ = l.h.RecordValue(v)
	if l.n == 0 || us < l.min {
		l.min = us
	}
	if us > l.max {
		l.max = us
	}
	l.n++
	l.sum += us
}

func ptr(v float64) *float64 { return &v }

func (l *latency) at(p float64, div float64) *float64 {
	if l.n == 0 {
		return nil
	}
	return ptr(float64(l.h.ValueAtQuantile(p)) / div)
}

func (l *latency) micros() percentiles {
	if l.n == 0 {
		return percentiles{}
	}
	return percentiles{Samples: l.n, P50: l.at(50, 1), P99: l.at(99, 1), P999: l.at(99.9, 1), Max: ptr(l.max), Mean: ptr(l.sum / float64(l.n))}
}

func (l *latency) millis() stats {
	if l.n == 0 {
		return stats{}
	}
	return stats{Samples: l.n, Min: ptr(l.min / 1000), P10: l.at(10, 1000), Median: l.at(50, 1000), Mean: ptr(l.sum / float64(l.n) / 1000), P90: l.at(90, 1000), P99: l.at(99, 1000), P999: l.at(99.9, 1000), Max: ptr(l.max / 1000)}
}

// totals is what every player adds to, under mu.
type totals struct {
	mu             sync.Mutex
	frames, acks   int64
	interArrival   *latency
	inputToAck     *latency
	closedByServer map[string]int64
	cpu0           time.Duration
	t0             time.Time
	closing        bool
}

func cpuTime() time.Duration {
	var r syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &r)
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}

func (t *totals) reset() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.frames, t.acks = 0, 0
	t.interArrival, t.inputToAck = newLatency(), newLatency()
	t.cpu0, t.t0 = cpuTime(), time.Now()
}

type player struct {
	conn *websocket.Conn
	// raw is the player's plain TCP connection on the "tcp" link (the loopback floor), else nil.
	raw     net.Conn
	writeMu sync.Mutex
	seq     uint32
	done    chan struct{}
	out     []byte
}

// send writes ClientInput{seq, client_time_ms}, size-delimited, as one binary message.
func (p *player) send(seq uint32) error {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	if p.raw != nil {
		// The loopback floor: any byte starts the connection's ticks; there are no flaps.
		_, err := p.raw.Write([]byte{1})
		return err
	}
	var msg []byte
	msg = protowire.AppendTag(msg, 1, protowire.VarintType)
	msg = protowire.AppendVarint(msg, uint64(seq))
	msg = protowire.AppendTag(msg, 2, protowire.Fixed64Type)
	msg = protowire.AppendFixed64(msg, math.Float64bits(float64(time.Now().UnixNano())/1e6))
	p.out = protowire.AppendVarint(p.out[:0], uint64(len(msg)))
	p.out = append(p.out, msg...)
	return p.conn.WriteMessage(websocket.BinaryMessage, p.out)
}

type clients struct {
	totals  totals
	players []*player
	flaps   map[int]bool
}

// floorMessageBytes is the size of each loopback-floor message (bench/src/stream-floor.ts).
const floorMessageBytes = 18

// readRaw counts the loopback floor's messages on one plain TCP connection until it ends: each read
// is an arrival (a message every 33 ms is read alone), and its bytes ÷ 18 the messages it carried.
func (c *clients) readRaw(p *player) {
	defer close(p.done)
	buf := make([]byte, 4096)
	var last time.Time
	rest := 0
	for {
		n, err := p.raw.Read(buf)
		if n > 0 {
			now := time.Now()
			rest += n
			c.totals.mu.Lock()
			c.totals.frames += int64(rest / floorMessageBytes)
			if !last.IsZero() {
				c.totals.interArrival.record(float64(now.Sub(last).Nanoseconds()) / 1000)
			}
			c.totals.mu.Unlock()
			rest %= floorMessageBytes
			last = now
		}
		if err != nil {
			c.ended(err)
			return
		}
	}
}

// read plays one game until its connection ends.
func (c *clients) read(p *player) {
	defer close(p.done)
	// pending holds what is not yet a whole size-delimited message; each WebSocket message is read
	// into the same buffer after it.
	pending := make([]byte, 0, 4096)
	var last time.Time
	var sentAt time.Time
	for {
		_, r, err := p.conn.NextReader()
		if err != nil {
			c.ended(err)
			return
		}
		for {
			if len(pending) == cap(pending) {
				pending = append(pending, 0)[:len(pending)]
			}
			n, err := r.Read(pending[len(pending):cap(pending)])
			pending = pending[:len(pending)+n]
			if err == io.EOF {
				break
			}
			if err != nil {
				c.ended(err)
				return
			}
		}
		at := 0
		for {
			size, n := protowire.ConsumeVarint(pending[at:])
			if n < 0 || uint64(len(pending)-at-n) < size {
				break
			}
			msg := pending[at+n : at+n+int(size)]
			at += n + int(size)
			kind, body := oneof(msg)
			now := time.Now()
			switch kind {
			case fieldAck:
				c.totals.mu.Lock()
				c.totals.acks++
				if !sentAt.IsZero() {
					c.totals.inputToAck.record(float64(now.Sub(sentAt).Nanoseconds()) / 1000)
				}
				c.totals.mu.Unlock()
				sentAt = time.Time{}
			case fieldFrame:
				c.totals.mu.Lock()
				c.totals.frames++
				if !last.IsZero() {
					c.totals.interArrival.record(float64(now.Sub(last).Nanoseconds()) / 1000)
				}
				c.totals.mu.Unlock()
				last = now
				if c.flaps[frameTick(body)+1] {
					sentAt = time.Now()
					p.seq++
					if p.send(p.seq) != nil {
						break
					}
				}
			}
		}
		pending = pending[:copy(pending, pending[at:])]
	}
}

// oneof returns GameStreamMessage's set field and its bytes.
func oneof(msg []byte) (protowire.Number, []byte) {
	for len(msg) > 0 {
		num, typ, n := protowire.ConsumeTag(msg)
		if n < 0 {
			return 0, nil
		}
		msg = msg[n:]
		if typ == protowire.BytesType {
			v, m := protowire.ConsumeBytes(msg)
			if m < 0 {
				return 0, nil
			}
			if num == fieldFrame || num == fieldAck || num == fieldSummary {
				return num, v
			}
			msg = msg[m:]
			continue
		}
		m := protowire.ConsumeFieldValue(num, typ, msg)
		if m < 0 {
			return 0, nil
		}
		msg = msg[m:]
	}
	return 0, nil
}

// frameTick reads Frame.tick.
func frameTick(frame []byte) int {
	for len(frame) > 0 {
		num, typ, n := protowire.ConsumeTag(frame)
		if n < 0 {
			return -1
		}
		frame = frame[n:]
		if num == fieldTick && typ == protowire.VarintType {
			v, _ := protowire.ConsumeVarint(frame)
			return int(v)
		}
		m := protowire.ConsumeFieldValue(num, typ, frame)
		if m < 0 {
			return -1
		}
		frame = frame[m:]
	}
	return -1
}

// ended counts a session the server closed (not one this process closed at "close").
func (c *clients) ended(err error) {
	key := "error"
	if errors.Is(err, io.EOF) {
		key = "closed"
	}
	var ce *websocket.CloseError
	if errors.As(err, &ce) {
		code := ce.Code
		if code == websocket.CloseNormalClosure {
			code = 0
		}
		key = fmt.Sprintf("%d %s", code, ce.Text)
		if ce.Text == "" {
			key = fmt.Sprint(code)
		}
	}
	c.totals.mu.Lock()
	defer c.totals.mu.Unlock()
	if !c.totals.closing {
		c.totals.closedByServer[key]++
	}
}

type openResult struct {
	Opened     int     `json:"opened"`
	Failed     int     `json:"failed"`
	FirstError *string `json:"firstError"`
	OpenMs     float64 `json:"openMs"`
}

func (c *clients) open(req request) (any, error) {
	if req.Link != "websocket" && req.Link != "tcp" {
		return nil, fmt.Errorf("link %q: these clients speak websocket and tcp (the loopback floor)", req.Link)
	}
	c.totals.mu.Lock()
	c.totals.closing = false
	c.totals.closedByServer = map[string]int64{}
	c.totals.mu.Unlock()
	c.flaps = map[int]bool{}
	for _, t := range req.FlapTicks {
		c.flaps[t] = true
	}
	started := time.Now()
	var mu sync.Mutex
	var failed int
	var firstError *string
	next := 0
	workers := max(1, req.Concurrency)
	var wg sync.WaitGroup
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 4096, WriteBufferSize: 1024}
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= len(req.Games) {
					mu.Unlock()
					return
				}
				g := req.Games[next]
				next++
				mu.Unlock()
				p := &player{done: make(chan struct{})}
				var err error
				if req.Link == "tcp" {
					p.raw, err = net.DialTimeout("tcp", strings.TrimPrefix(req.URL, "tcp://"), 30*time.Second)
				} else {
					q := url.Values{"gameId": {g.ID}, "ticket": {g.Ticket}}
					p.conn, _, err = dialer.Dial(req.URL+"?"+q.Encode(), nil)
				}
				mu.Lock()
				if err != nil {
					failed++
					if firstError == nil {
						s := err.Error()
						firstError = &s
					}
					mu.Unlock()
					continue
				}
				c.players = append(c.players, p)
				mu.Unlock()
				if p.raw != nil {
					go c.readRaw(p)
				} else {
					go c.read(p)
				}
			}
		}()
	}
	wg.Wait()
	return openResult{Opened: len(req.Games) - failed, Failed: failed, FirstError: firstError, OpenMs: float64(time.Since(started).Microseconds()) / 1000}, nil
}

// start sends each game's start press, spread evenly over the ramp.
func (c *clients) start(req request) (any, error) {
	started := time.Now()
	n := 0
	for i, p := range c.players {
		select {
		case <-p.done:
			continue
		default:
		}
		due := started.Add(time.Duration(float64(i) * req.RampMs / float64(len(c.players)) * float64(time.Millisecond)))
		time.Sleep(time.Until(due))
		p.seq = 1
		if p.send(1) == nil {
			n++
		}
	}
	return n, nil
}

type clientStats struct {
	Frames            int64            `json:"frames"`
	Acks              int64            `json:"acks"`
	InterArrival      percentiles      `json:"interArrival"`
	InterArrivalStats stats            `json:"interArrivalStats"`
	InputToAck        stats            `json:"inputToAck"`
	ClosedByServer    map[string]int64 `json:"closedByServer"`
	CPUUs             float64          `json:"cpuUs"`
	WallMs            float64          `json:"wallMs"`
}

func (c *clients) stats() (any, error) {
	t := &c.totals
	t.mu.Lock()
	defer t.mu.Unlock()
	closed := map[string]int64{}
	for k, v := range t.closedByServer {
		closed[k] = v
	}
	return clientStats{
		Frames: t.frames, Acks: t.acks,
		InterArrival: t.interArrival.micros(), InterArrivalStats: t.interArrival.millis(), InputToAck: t.inputToAck.millis(),
		ClosedByServer: closed,
		CPUUs:          float64((cpuTime() - t.cpu0).Microseconds()),
		WallMs:         float64(time.Since(t.t0).Microseconds()) / 1000,
	}, nil
}

// closeAll closes every game's stream (1000 "benchmark step over") and waits up to 5 s for them.
func (c *clients) closeAll() (any, error) {
	c.totals.mu.Lock()
	c.totals.closing = true
	c.totals.mu.Unlock()
	msg := websocket.FormatCloseMessage(websocket.CloseNormalClosure, "benchmark step over")
	for _, p := range c.players {
		if p.raw != nil {
			_ = p.raw.Close()
			continue
		}
		p.writeMu.Lock()
		_ = p.conn.WriteControl(websocket.CloseMessage, msg, time.Now().Add(time.Second))
		p.writeMu.Unlock()
	}
	deadline := time.After(5 * time.Second)
	for _, p := range c.players {
		select {
		case <-p.done:
		case <-deadline:
		}
	}
	for _, p := range c.players {
		if p.conn != nil {
			_ = p.conn.Close()
		}
	}
	c.players = nil
	return nil, nil
}

func (c *clients) handle(req request) (any, error) {
	switch req.Type {
	case "open":
		return c.open(req)
	case "start":
		return c.start(req)
	case "reset":
		c.totals.reset()
		return nil, nil
	case "stats":
		return c.stats()
	case "close":
		return c.closeAll()
	}
	return nil, fmt.Errorf("unknown request %q", req.Type)
}

func main() {
	c := &clients{}
	c.totals.closedByServer = map[string]int64{}
	c.totals.reset()
	in := bufio.NewReader(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var env envelope
			var r reply
			if jerr := json.Unmarshal(line, &env); jerr != nil {
				r = reply{ID: env.ID, Error: "bad request line: " + jerr.Error()}
			} else if result, herr := c.handle(env.Body); herr != nil {
				r = reply{ID: env.ID, Error: herr.Error()}
			} else {
				r = reply{ID: env.ID, OK: true, Result: result}
			}
			if werr := out.Encode(r); werr != nil {
				os.Exit(1)
			}
		}
		if err == io.EOF {
			_, _ = c.closeAll()
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "go-stream-clients: reading stdin:", err)
			os.Exit(1)
		}
	}
}

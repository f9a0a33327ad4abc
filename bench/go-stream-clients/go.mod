module flaplab.dev/bench/go-stream-clients

go 1.21

require (
	github.com/HdrHistogram/hdrhistogram-go v1.1.2
	github.com/gorilla/websocket v1.5.3
	google.golang.org/protobuf v1.36.5
)

// Command carphoto-lab is the laboratory beside the service: the
// benchmarks and the vision measurements that people tuning carphoto run,
// on labelled data sets and on a running service. None of it is linked
// into the service binary (cmd/carphoto).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"carphoto/cmd/carphoto-lab/internal/bench"
)

const usage = `usage: carphoto-lab bench WHAT [flags]

  carphoto-lab bench service [flags]         latency through HTTP → queue → worker
  carphoto-lab bench idle [flags]            idle CPU of a worker
  carphoto-lab bench plates DIR              plates whose characters are hidden, recall, false detections, time
  carphoto-lab bench cutout DIR              cut-out IoU and time
  carphoto-lab bench codec [flags] FILE      blur-plates CPU: block path, full path, djpeg|cjpeg

bench service and bench idle run the service binary (--carphoto PATH; by
default one built from ./cmd/carphoto, so run them from the repository root).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "carphoto-lab:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		_, err := io.WriteString(stdout, usage)
		return err
	}
	if args[0] != "bench" {
		return fmt.Errorf("unknown command %q\n\n%s", args[0], usage)
	}
	if len(args) == 1 {
		return errors.New("bench: say what to measure: service, idle, plates, cutout or codec")
	}
	switch what, rest := args[1], args[2:]; what {
	case "service":
		return benchService(ctx, rest, getenv, stdout)
	case "idle":
		return benchIdle(ctx, rest, getenv, stdout)
	case "plates":
		return bench.Plates(ctx, rest, stdout)
	case "cutout":
		return bench.Cutout(ctx, rest, stdout)
	case "codec":
		return bench.Codec(ctx, rest, stdout)
	default:
		return fmt.Errorf("bench: unknown benchmark %q: want service, idle, plates, cutout or codec", what)
	}
}

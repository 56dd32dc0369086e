// Command carphoto is the car photo processing service: the HTTP API, the
// queue worker, the admin CLI and the benchmark and vision tools, in one binary.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "carphoto:", err)
		os.Exit(1)
	}
}

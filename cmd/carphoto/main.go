// Command carphoto is the car photo processing service: the HTTP API, the
// queue worker, the admin CLI and the plate and cut-out tools on photo
// files, in one binary (internal/service). The benchmarks are
// cmd/carphoto-lab's.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"carphoto/internal/service"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := service.Run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "carphoto:", err)
		os.Exit(1)
	}
}

package billing_test

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"carphoto"
	"carphoto/billing"
)

// A request's billing calls ride through a Redis that stops and comes
// back within their deadline (a restart, a failover): billing tries again
// itself, so the server never wraps it. A Redis still away at the deadline
// is EUnavailable, never another code. The client reaches miniredis
// through a gate the test closes and opens again on the same port, as a
// Redis that stops and comes back refuses connections (miniredis's own
// Restart answers "unknown command" for a moment while it sets itself up,
// which no real Redis does).
func TestRidesThroughRedisStop(t *testing.T) {
	m := miniredis.RunT(t)
	g := openGate(t, m.Addr())
	rdb := redis.NewClient(&redis.Options{Addr: g.addr, MaxRetries: -1})
	defer rdb.Close()
	s := billing.New(rdb, billing.Config{Assets: localAssets(t), MaxInFlightPerKey: 1})
	ctx := context.Background()
	a, key := createAccount(t, s, 5)

	stopFor := func(d time.Duration) {
		t.Helper()
		g.close()
		go func() {
			time.Sleep(d)
			g.open(t)
		}()
	}
	within := func(what string, fn func(ctx context.Context) error) {
		t.Helper()
		stopFor(300 * time.Millisecond)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		start := time.Now()
		if err := fn(cctx); err != nil {
			t.Fatalf("%s through a 300 ms Redis stop: %v", what, err)
		}
		if took := time.Since(start); took < 250*time.Millisecond {
			t.Errorf("%s took %v: it never met the stopped Redis, the test proved nothing", what, took)
		}
	}

	within("Authenticate", func(ctx context.Context) error { _, err := s.Authenticate(ctx, key); return err })
	within("Allow", func(ctx context.Context) error { _, err := s.Allow(ctx, a.KeyID); return err })
	var f billing.InFlight
	within("Enter", func(ctx context.Context) (err error) { f, err = s.Enter(ctx, a.KeyID, "req-1"); return err })
	h := s.NewHold(a.ID, "req-1", billing.Call{Op: "blur-plates"})
	within("Place", func(ctx context.Context) error { _, err := s.Place(ctx, h); return err })
	within("Capture", func(ctx context.Context) error { _, err := s.Capture(ctx, h); return err })
	within("Leave", func(ctx context.Context) error { return s.Leave(ctx, f) })
	within("Account", func(ctx context.Context) error { _, err := s.Account(ctx, a.ID); return err })

	if got := balance(t, s, a.ID); got != 4 {
		t.Errorf("balance %d after one captured hold from 5, want 4 (charged once through the stops)", got)
	}
	// The slot was left: the key's next call enters at once.
	ectx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := s.Enter(ectx, a.KeyID, "req-2"); err != nil {
		t.Errorf("Enter after Leave: %v, want the key's one slot free", err)
	}

	// Away past the deadline: the store's error, for the caller to answer 503.
	g.close()
	sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer scancel()
	_, err := s.Authenticate(sctx, key)
	wantCode(t, err, carphoto.EUnavailable)
}

// gate is a TCP relay to a Redis that the test can close, refusing
// connections and cutting those open, and open again on the same address.
type gate struct {
	addr, to string
	mu       sync.Mutex
	ln       net.Listener
	conns    []net.Conn
}

func openGate(t *testing.T, to string) *gate {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{addr: ln.Addr().String(), to: to}
	g.serve(ln)
	t.Cleanup(g.close)
	return g
}

func (g *gate) open(t *testing.T) {
	ln, err := net.Listen("tcp", g.addr)
	if err != nil {
		t.Errorf("reopen the gate: %v", err)
		return
	}
	g.serve(ln)
}

func (g *gate) serve(ln net.Listener) {
	g.mu.Lock()
	g.ln = ln
	g.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			r, err := net.Dial("tcp", g.to)
			if err != nil {
				c.Close()
				continue
			}
			g.mu.Lock()
			g.conns = append(g.conns, c, r)
			g.mu.Unlock()
			go func() { io.Copy(r, c); r.Close() }()
			go func() { io.Copy(c, r); c.Close() }()
		}
	}()
}

func (g *gate) close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ln != nil {
		g.ln.Close()
		g.ln = nil
	}
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

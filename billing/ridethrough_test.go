package billing_test

import (
	"context"
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
// is EUnavailable, never another code. miniredis, as the test stops and
// restarts it, keeping its data.
func TestRidesThroughRedisStop(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	defer rdb.Close()
	s := billing.New(rdb, billing.Config{Assets: localAssets(t), MaxInFlightPerKey: 1})
	ctx := context.Background()
	a, key := createAccount(t, s, 5)

	stopFor := func(d time.Duration) {
		t.Helper()
		m.Close()
		go func() {
			time.Sleep(d)
			m.Restart()
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
	h := s.NewHold(a.ID, "req-1", "blur-plates")
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
	m.Close()
	defer m.Restart()
	sctx, scancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer scancel()
	_, err := s.Authenticate(sctx, key)
	wantCode(t, err, carphoto.EUnavailable)
}

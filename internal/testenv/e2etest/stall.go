package e2etest

import (
	"context"
	"testing"
	"time"
)

// InFlight returns how many photo requests of key count against its cap.
func (s *Service) InFlight(t *testing.T, key string) int64 {
	t.Helper()
	a, err := s.Billing.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.RS.Client.ZCard(context.Background(), "cp:inflight:{"+a.KeyID+"}").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Queued returns how many photo requests of key wait for one of its slots.
func (s *Service) Queued(t *testing.T, key string) int64 {
	t.Helper()
	a, err := s.Billing.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	n, err := s.RS.Client.ZCard(context.Background(), "cp:inqueue:{"+a.KeyID+"}").Result()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// WaitInFlight waits until key has n photo requests in flight.
func (s *Service) WaitInFlight(t *testing.T, key string, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.InFlight(t, key) != n {
		if time.Now().After(deadline) {
			t.Fatalf("key has %d photo requests in flight, want %d", s.InFlight(t, key), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

package e2etest

import (
	"context"
	"testing"
	"time"
)

// AccountOf returns the id of the account whose key this is.
func (s *Service) AccountOf(t *testing.T, key string) string {
	t.Helper()
	a, err := s.Billing.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID
}

// WaitNoHolds asserts that no hold is open within 5 s: a call's hold is
// captured once its client has the whole answer, so the last capture may
// land just after the client returns.
func WaitNoHolds(t *testing.T, s *Service) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := s.Billing.OpenHolds(context.Background())
		if err == nil && n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("%d holds still open 5 s after the last call (%v)", n, err)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

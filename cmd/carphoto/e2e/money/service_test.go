package money

import (
	_ "image/jpeg"
	"testing"

	"carphoto/internal/testenv/e2etest"
)

// 16 concurrent calls on a balance of 5: exactly 5 succeed and are charged.
func TestConcurrentCallsChargeExactly(t *testing.T) {
	e2etest.SideBySide(t)
	s := e2etest.StartService(t, map[string]string{"MAX_IN_FLIGHT_PER_KEY": "16"})
	id, key := s.Account(t, 5)
	photo := e2etest.CarPhoto(t)
	counts := e2etest.Burst(t, 16, s.URL+"/v1/blur-plates", key, photo)
	if counts[200] != 5 || counts[402] != 11 {
		t.Errorf("statuses %v, want 5×200 and 11×402", counts)
	}
	if got := s.Credits(t, id); got != 0 {
		t.Errorf("balance %d, want 0", got)
	}
}

package billing

import (
	"context"
	"time"
)

// SetNow replaces the service's clock, so tests can move time forward
// without sleeping.
func (s *Service) SetNow(now func() time.Time) { s.now = now }

// Reap runs one expiry sweep, as Run does on every tick.
func (s *Service) Reap(ctx context.Context) (int, error) { return s.reap(ctx) }

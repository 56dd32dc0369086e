package billing

import (
	"context"
	"strconv"
	"time"
)

// Ledger entry kinds. They are stored in Redis and read by the companion
// app: never rename them.
const (
	KindHold    = "hold"    // credits reserved before work
	KindCapture = "capture" // the held credits are charged (delta 0)
	KindRelease = "release" // the held credits come back: the call failed
	KindExpire  = "expire"  // the held credits come back: nobody closed the hold in time
	KindAdmin   = "admin"   // an administrator changed the balance
	KindTopup   = "topup"   // reserved for the companion app's purchases
)

// Entry is one movement in an account's ledger.
type Entry struct {
	ID        string // the stream entry id
	Kind      string
	RequestID string
	// ClientRequestID is the client's own X-Request-Id for the call, on
	// its hold's line, when it sent one (WithClientRequestID): kept beside
	// ours, never a key.
	ClientRequestID string
	Op              string
	Amount          int64 // credits moved, always ≥ 0
	Delta           int64 // change of the spendable balance
	Balance         int64 // spendable balance after the movement
	HoldID          string
	At              time.Time
}

type clientRequestIDKey struct{}

// WithClientRequestID returns ctx carrying the client's own request id,
// which a hold placed under it writes on its ledger line.
func WithClientRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, clientRequestIDKey{}, id)
}

// clientRequestID is the id WithClientRequestID put in ctx, or "".
func clientRequestID(ctx context.Context) string {
	id, _ := ctx.Value(clientRequestIDKey{}).(string)
	return id
}

// Ledger returns up to n of the account's latest ledger entries, newest first.
func (s *Service) Ledger(ctx context.Context, accountID string, n int64) ([]Entry, error) {
	msgs, err := s.rdb.XRevRangeN(ctx, ledgerKey(accountID), "+", "-", n).Result()
	if err != nil {
		return nil, storeErr("read ledger", err)
	}
	out := make([]Entry, 0, len(msgs))
	for _, m := range msgs {
		str := func(k string) string { v, _ := m.Values[k].(string); return v }
		num := func(k string) int64 { v, _ := strconv.ParseInt(str(k), 10, 64); return v }
		out = append(out, Entry{
			ID: m.ID, Kind: str("kind"), RequestID: str("request_id"), ClientRequestID: str("client_request_id"), Op: str("op"),
			Amount: num("amount"), Delta: num("delta"), Balance: num("balance"),
			HoldID: str("hold_id"), At: time.UnixMilli(num("at")).UTC(),
		})
	}
	return out, nil
}

package idempotency_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"carphoto/idempotency"
	"carphoto/internal/testenv/redistest"
)

func newStore(tb testing.TB, ttl, running time.Duration) (*idempotency.Store, *redistest.Server) {
	tb.Helper()
	r := redistest.New(tb, 8)
	return idempotency.New(r.Client, ttl, running), r
}

func TestReplayMismatchAndScope(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, time.Minute, time.Minute)
	fp := idempotency.Fingerprint([]byte("blur-plates"), []byte("photo"))
	state, claim, _, err := s.Begin(ctx, "acct_a", "k1", fp)
	if err != nil || state != idempotency.Started {
		t.Fatalf("first Begin: %v, %v; want Started", state, err)
	}
	if state, _, _, _ := s.Begin(ctx, "acct_a", "k1", fp); state != idempotency.InProgress {
		t.Fatalf("Begin while running: %v, want InProgress", state)
	}
	body := []byte("\xff\xd8binary\x00image")
	if err := s.Finish(ctx, claim, idempotency.Response{Status: 200, Header: map[string]string{"X-Credits-Charged": "1"}, Body: body}); err != nil {
		t.Fatal(err)
	}
	state, _, res, err := s.Begin(ctx, "acct_a", "k1", fp)
	if err != nil || state != idempotency.Replay || res.Status != 200 || !bytes.Equal(res.Body, body) || res.Header["X-Credits-Charged"] != "1" {
		t.Fatalf("Begin after Finish: %v %+v %v; want the stored answer", state, res, err)
	}
	other := idempotency.Fingerprint([]byte("blur-plates"), []byte("another photo"))
	if state, _, _, _ := s.Begin(ctx, "acct_a", "k1", other); state != idempotency.Mismatch {
		t.Fatalf("Begin with other content: %v, want Mismatch", state)
	}
	if state, _, _, _ := s.Begin(ctx, "acct_b", "k1", other); state != idempotency.Started {
		t.Fatalf("another account's same key: %v, want Started", state)
	}
}

// Parts are delimited: moving bytes from one part to the next changes the
// fingerprint.
func TestFingerprintDelimitsParts(t *testing.T) {
	if idempotency.Fingerprint([]byte("ab"), []byte("c")) == idempotency.Fingerprint([]byte("a"), []byte("bc")) {
		t.Fatal("fingerprints of different part splits are equal")
	}
}

// An abandoned claim (a failed, uncharged request) lets the retry run; a
// claim whose process died lapses after the running TTL.
func TestAbandonAndLapse(t *testing.T) {
	ctx := context.Background()
	s, r := newStore(t, time.Minute, 300*time.Millisecond)
	state, claim, _, _ := s.Begin(ctx, "acct_a", "k", "fp")
	if state != idempotency.Started {
		t.Fatalf("Begin: %v", state)
	}
	if err := s.Abandon(ctx, claim); err != nil {
		t.Fatal(err)
	}
	if state, _, _, _ := s.Begin(ctx, "acct_a", "k", "fp"); state != idempotency.Started {
		t.Fatalf("Begin after Abandon: %v, want Started", state)
	}
	if r.Mini != nil {
		r.Mini.FastForward(time.Second)
	} else {
		time.Sleep(400 * time.Millisecond)
	}
	state, late, _, _ := s.Begin(ctx, "acct_a", "k", "fp")
	if state != idempotency.Started {
		t.Fatalf("Begin after the running TTL: %v, want Started", state)
	}
	if err := s.Finish(ctx, claim, idempotency.Response{Status: 200}); err != idempotency.ErrClaimLost {
		t.Fatalf("Finish of a lapsed claim: %v, want ErrClaimLost", err)
	}
	if err := s.Abandon(ctx, late); err != nil {
		t.Fatal(err)
	}
}

// Of concurrent duplicates exactly one is Started.
func TestConcurrentBegin(t *testing.T) {
	s, _ := newStore(t, time.Minute, time.Minute)
	var mu sync.Mutex
	started := 0
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			state, _, _, err := s.Begin(context.Background(), "acct_a", "k", "fp")
			if err != nil {
				t.Error(err)
			}
			if state == idempotency.Started {
				mu.Lock()
				started++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if started != 1 {
		t.Fatalf("%d of 16 concurrent duplicates started, want 1", started)
	}
}

// An answer kept unpaid (it never reached its client) is replayed marked
// so, and paid once: of two retries that deliver it, one pays.
func TestUnpaidAnswerPaidOnce(t *testing.T) {
	ctx := context.Background()
	s, _ := newStore(t, time.Minute, time.Minute)
	fp := idempotency.Fingerprint([]byte("car-shadow"), []byte("photo"))
	_, claim, _, err := s.Begin(ctx, "acct_a", "k", fp)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Finish(ctx, claim, idempotency.Response{Status: 200, Body: []byte("png"), Unpaid: true}); err != nil {
		t.Fatal(err)
	}
	state, again, res, err := s.Begin(ctx, "acct_a", "k", fp)
	if err != nil || state != idempotency.Replay || !res.Unpaid {
		t.Fatalf("Begin after an unpaid Finish: %v %+v %v; want a Replay marked unpaid", state, res, err)
	}
	if paid, err := s.Pay(ctx, again); err != nil || !paid {
		t.Fatalf("first Pay: %v %v, want true", paid, err)
	}
	if paid, err := s.Pay(ctx, again); err != nil || paid {
		t.Fatalf("second Pay: %v %v, want false: paid once", paid, err)
	}
	if _, _, res, _ := s.Begin(ctx, "acct_a", "k", fp); res.Unpaid {
		t.Error("the answer is still unpaid after Pay")
	}
}

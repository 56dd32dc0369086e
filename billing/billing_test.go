package billing_test

import (
	"bytes"
	"context"
	"errors"
	"image"
	"image/png"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto"
	"carphoto/billing"
	"carphoto/internal/testenv/redistest"
	"carphoto/objstore"
)

// db is this package's database on a shared test Redis.
const db = 3

func newService(tb testing.TB, cfg billing.Config) (*billing.Service, *redistest.Server) {
	tb.Helper()
	r := redistest.New(tb, db)
	if cfg.Assets == nil {
		cfg.Assets = localAssets(tb)
	}
	return billing.New(r.Client, cfg), r
}

// localAssets is an asset store in a directory of the test's own.
func localAssets(tb testing.TB) objstore.Store {
	tb.Helper()
	st, err := objstore.NewLocal(filepath.Join(tb.TempDir(), objstore.Assets))
	if err != nil {
		tb.Fatal(err)
	}
	return st
}

func createAccount(tb testing.TB, s *billing.Service, credits int64) (billing.Account, string) {
	tb.Helper()
	a, key, err := s.CreateAccount(context.Background(), "Test Motors", credits)
	if err != nil {
		tb.Fatalf("CreateAccount: %v", err)
	}
	return a, key
}

// wantCode fails unless err carries the given carphoto code.
func wantCode(tb testing.TB, err error, code string) {
	tb.Helper()
	if got := carphoto.ErrorCode(err); err == nil || got != code {
		tb.Fatalf("error %v: got code %q, want %q", err, got, code)
	}
}

func balance(tb testing.TB, s *billing.Service, id string) int64 {
	tb.Helper()
	a, err := s.Account(context.Background(), id)
	if err != nil {
		tb.Fatalf("Account: %v", err)
	}
	return a.Credits
}

// kinds counts the account's ledger entries by kind.
func kinds(tb testing.TB, s *billing.Service, id string) map[string]int {
	tb.Helper()
	entries, err := s.Ledger(context.Background(), id, 1000)
	if err != nil {
		tb.Fatalf("Ledger: %v", err)
	}
	n := map[string]int{}
	for _, e := range entries {
		n[e.Kind]++
	}
	return n
}

func TestCreateAccountAndAuthenticate(t *testing.T) {
	s, _ := newService(t, billing.Config{})
	a, key := createAccount(t, s, 10)
	if !strings.HasPrefix(key, billing.KeyPrefix) || len(key) != len(billing.KeyPrefix)+43 {
		t.Fatalf("key %q: want %s and 43 base62 characters", key, billing.KeyPrefix)
	}
	got, err := s.Authenticate(context.Background(), key)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if got.ID != a.ID || got.Name != "Test Motors" || got.Credits != 10 || got.KeyID == "" {
		t.Fatalf("Authenticate = %+v, want account %s with 10 credits", got, a.ID)
	}
	if _, key2 := createAccount(t, s, 0); key2 == key {
		t.Fatal("two accounts got the same key")
	}
}

func TestAuthenticateRefusesBadKeys(t *testing.T) {
	s, _ := newService(t, billing.Config{})
	_, key := createAccount(t, s, 1)
	unknown := billing.KeyPrefix + strings.Repeat("A", 43)
	for name, k := range map[string]string{
		"missing":        "",
		"garbage":        "hello",
		"wrong prefix":   "sk_live_" + key[len(billing.KeyPrefix):],
		"too short":      key[:len(key)-1],
		"bad character":  key[:len(key)-1] + "-",
		"unknown":        unknown,
		"key with space": key + " ",
	} {
		t.Run(name, func(t *testing.T) {
			_, err := s.Authenticate(context.Background(), k)
			wantCode(t, err, carphoto.EInvalidAPIKey)
			if k != "" && strings.Contains(err.Error(), k) {
				t.Fatalf("error %q repeats the key", err)
			}
		})
	}
}

func TestRotateAndRevoke(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{})
	a, old := createAccount(t, s, 3)

	fresh, err := s.RotateKey(ctx, a.ID)
	if err != nil {
		t.Fatalf("RotateKey: %v", err)
	}
	_, err = s.Authenticate(ctx, old)
	wantCode(t, err, carphoto.EInvalidAPIKey)
	if got, err := s.Authenticate(ctx, fresh); err != nil || got.ID != a.ID || got.Credits != 3 {
		t.Fatalf("Authenticate(new key) = %+v, %v; want account %s with its 3 credits", got, err, a.ID)
	}

	if err := s.RevokeKey(ctx, a.ID); err != nil {
		t.Fatalf("RevokeKey: %v", err)
	}
	_, err = s.Authenticate(ctx, fresh)
	wantCode(t, err, carphoto.EInvalidAPIKey)
	if got, err := s.Account(ctx, a.ID); err != nil || got.KeyID != "" || got.Credits != 3 {
		t.Fatalf("after revoke Account = %+v, %v; want no key and the balance kept", got, err)
	}

	again, err := s.RotateKey(ctx, a.ID)
	if err != nil {
		t.Fatalf("RotateKey after revoke: %v", err)
	}
	if _, err := s.Authenticate(ctx, again); err != nil {
		t.Fatalf("a key issued after a revoke must work: %v", err)
	}
	for _, k := range []string{old, fresh} {
		_, err := s.Authenticate(ctx, k)
		wantCode(t, err, carphoto.EInvalidAPIKey)
	}

	wantCode(t, s.RevokeKey(ctx, "acct_nosuchaccount"), carphoto.ENotFound)
	_, err = s.RotateKey(ctx, "acct_nosuchaccount")
	wantCode(t, err, carphoto.ENotFound)
}

// TestKeysNeverStoredInClear dumps every key and value in the database and
// looks for the API keys, whole or in part.
func TestKeysNeverStoredInClear(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{})
	a, key1 := createAccount(t, s, 5)
	key2, err := s.RotateKey(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	h, err := s.Hold(ctx, a.ID, "req-1", billing.Call{Op: "blur-plates"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Capture(ctx, h); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allow(ctx, a.KeyID); err != nil {
		t.Fatal(err)
	}

	var dump strings.Builder
	keys := r.Keys(t, "*")
	if len(keys) == 0 {
		t.Fatal("no keys in Redis; the dump would prove nothing")
	}
	for _, k := range keys {
		dump.WriteString(k + "\n")
		switch typ := r.Client.Type(ctx, k).Val(); typ {
		case "string":
			dump.WriteString(r.Client.Get(ctx, k).Val())
		case "hash":
			for f, v := range r.Client.HGetAll(ctx, k).Val() {
				dump.WriteString(f + "=" + v + "\n")
			}
		case "zset":
			dump.WriteString(strings.Join(r.Client.ZRange(ctx, k, 0, -1).Val(), "\n"))
		case "stream":
			for _, m := range r.Client.XRange(ctx, k, "-", "+").Val() {
				for f, v := range m.Values {
					dump.WriteString(f + "=" + v.(string) + "\n")
				}
			}
		default:
			t.Fatalf("key %s has type %s, which this test cannot read", k, typ)
		}
	}
	for _, k := range []string{key1, key2} {
		secret := k[len(billing.KeyPrefix):]
		for _, part := range []string{secret[:16], secret[16:32], secret[27:]} {
			if strings.Contains(dump.String(), part) {
				t.Fatalf("part of an API key (%s…) is stored in Redis in clear", part[:4])
			}
		}
	}
}

func TestHoldCaptureCharges(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{CostPerOp: map[string]int64{"plate-logo": 2}})
	a, _ := createAccount(t, s, 5)

	h, err := s.Hold(ctx, a.ID, "req-1", billing.Call{Op: "plate-logo"})
	if err != nil {
		t.Fatalf("Hold: %v", err)
	}
	if h.Amount() != 2 {
		t.Fatalf("hold amount %d, want plate-logo's price 2", h.Amount())
	}
	if got := balance(t, s, a.ID); got != 3 {
		t.Fatalf("balance during the hold %d, want 3 (held credits are not spendable)", got)
	}
	left, err := s.Capture(ctx, h)
	if err != nil || left != 3 {
		t.Fatalf("Capture = %d, %v; want 3", left, err)
	}
	left, err = s.Capture(ctx, h)
	if err != nil || left != 3 {
		t.Fatalf("second Capture = %d, %v; want 3 again, nothing more charged", left, err)
	}
	if err := s.Release(ctx, h); err != nil {
		t.Fatalf("Release after Capture: %v", err)
	}
	if got := balance(t, s, a.ID); got != 3 {
		t.Fatalf("balance %d, want 3: a Release after Capture must not refund", got)
	}
	if k := kinds(t, s, a.ID); k[billing.KindCapture] != 1 || k[billing.KindHold] != 1 || k[billing.KindRelease] != 0 {
		t.Fatalf("ledger kinds %v, want one hold and one capture", k)
	}
	entries, _ := s.Ledger(ctx, a.ID, 1)
	if e := entries[0]; e.Kind != billing.KindCapture || e.RequestID != "req-1" || e.Op != "plate-logo" || e.Amount != 2 || e.Balance != 3 {
		t.Fatalf("latest ledger entry %+v, want the capture of 2 credits for req-1", e)
	}
}

func TestHoldReleaseRefunds(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{})
	a, _ := createAccount(t, s, 1)
	h, err := s.Hold(ctx, a.ID, "req-1", billing.Call{Op: "blur-plates"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, h); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if err := s.Release(ctx, h); err != nil {
		t.Fatalf("second Release: %v", err)
	}
	if got := balance(t, s, a.ID); got != 1 {
		t.Fatalf("balance %d, want 1 after release (refunded once)", got)
	}
	if _, err := s.Capture(ctx, h); !errors.Is(err, billing.ErrHoldClosed) {
		t.Fatalf("Capture after Release: %v, want ErrHoldClosed", err)
	}
	if got := balance(t, s, a.ID); got != 1 {
		t.Fatalf("balance %d, want 1: a Capture after Release must not charge", got)
	}
	if err := s.Release(ctx, billing.Hold{}); err != nil {
		t.Fatalf("Release of the zero Hold: %v", err)
	}
}

func TestHoldInsufficientCredits(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{CostPerOp: map[string]int64{"car-shadow": 3}})
	a, _ := createAccount(t, s, 2)
	_, err := s.Hold(ctx, a.ID, "req-1", billing.Call{Op: "car-shadow"})
	wantCode(t, err, carphoto.EInsufficientCredits)
	if want := "this call costs 3 credits; the balance is 2"; carphoto.ErrorMessage(err) != want {
		t.Fatalf("message %q, want %q", carphoto.ErrorMessage(err), want)
	}
	if got := balance(t, s, a.ID); got != 2 {
		t.Fatalf("balance %d, want 2 untouched", got)
	}
}

// TestConcurrentHolds is the acceptance case: 16 concurrent calls on a
// balance of 5.
func TestConcurrentHolds(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{})
	a, _ := createAccount(t, s, 5)

	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			h, err := s.Hold(ctx, a.ID, "req", billing.Call{Op: "blur-plates"})
			if err == nil {
				_, err = s.Capture(ctx, h)
			}
			errs[i] = err
		}()
	}
	wg.Wait()
	ok, short := 0, 0
	for _, err := range errs {
		switch {
		case err == nil:
			ok++
		case carphoto.ErrorCode(err) == carphoto.EInsufficientCredits:
			short++
		default:
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if ok != 5 || short != 11 {
		t.Fatalf("%d succeeded and %d were refused, want 5 and 11", ok, short)
	}
	if got := balance(t, s, a.ID); got != 0 {
		t.Fatalf("balance %d, want 0", got)
	}
	if k := kinds(t, s, a.ID); k[billing.KindCapture] != 5 {
		t.Fatalf("ledger has %d captures, want 5 (%v)", k[billing.KindCapture], k)
	}
}

// TestExpiredHoldComesBack plays a web process that died after Hold: its
// hold returns to the balance on the first sweep past HoldTTL, and not before.
func TestExpiredHoldComesBack(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{HoldTTL: time.Minute})
	a, _ := createAccount(t, s, 2)
	h, err := s.Hold(ctx, a.ID, "req-dead", billing.Call{Op: "blur-plates"})
	if err != nil {
		t.Fatal(err)
	}
	// Another web process sweeps; first before the hold is due, then after.
	sweeper := billing.New(r.Client, billing.Config{HoldTTL: time.Minute})
	if n, err := sweeper.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("sweep before expiry closed %d holds (%v), want 0", n, err)
	}
	if got := balance(t, s, a.ID); got != 1 {
		t.Fatalf("balance %d, want 1 while the hold is live", got)
	}
	sweeper.SetNow(func() time.Time { return time.Now().Add(61 * time.Second) })
	if n, err := sweeper.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("sweep after expiry closed %d holds (%v), want 1", n, err)
	}
	if got := balance(t, s, a.ID); got != 2 {
		t.Fatalf("balance %d, want 2: the expired hold must come back", got)
	}
	if n, _ := sweeper.Reap(ctx); n != 0 {
		t.Fatalf("second sweep closed %d holds, want 0", n)
	}
	if _, err := s.Capture(ctx, h); !errors.Is(err, billing.ErrHoldClosed) {
		t.Fatalf("Capture of an expired hold: %v, want ErrHoldClosed", err)
	}
	if got := balance(t, s, a.ID); got != 2 {
		t.Fatalf("balance %d, want 2: a late Capture must not charge", got)
	}
	if k := kinds(t, s, a.ID); k[billing.KindExpire] != 1 || k[billing.KindCapture] != 0 {
		t.Fatalf("ledger kinds %v, want one expire and no capture", k)
	}
}

// TestSweepFollowsListedSlots: the sweep asks only the slots listed in
// cp:holdslots, so its cost follows the slots in use; a hold whose slot is
// missing from the list (placed by a process before the list, or the
// listing lost in a failover) is still returned by the hourly full scan;
// an empty slot unused for an hour leaves the list, and one a hold was
// placed in since stays.
func TestSweepFollowsListedSlots(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{HoldTTL: time.Minute})
	a, _ := createAccount(t, s, 3)
	if _, err := s.Hold(ctx, a.ID, "req-dead", billing.Call{Op: "blur-plates"}); err != nil {
		t.Fatal(err)
	}
	listed := r.Client.ZRange(ctx, "cp:holdslots", 0, -1).Val()
	if len(listed) != 1 {
		t.Fatalf("cp:holdslots %v after one hold, want its slot alone", listed)
	}
	if n, err := s.OpenHolds(ctx); err != nil || n != 1 {
		t.Fatalf("OpenHolds %d (%v), want 1", n, err)
	}

	// The listing is lost: the sweep of the listed slots misses the hold,
	// the full scan (its hourly turn free) returns it and lists the slot.
	later := func() time.Time { return time.Now().Add(2 * time.Minute) }
	r.Client.Del(ctx, "cp:holdslots")
	r.Client.Set(ctx, "cp:holdscan", 1, time.Hour)
	sweeper := billing.New(r.Client, billing.Config{HoldTTL: time.Minute})
	sweeper.SetNow(later)
	if n, err := sweeper.Reap(ctx); err != nil || n != 0 {
		t.Fatalf("sweep of the listed slots closed %d (%v), want 0: none is listed", n, err)
	}
	r.Client.Del(ctx, "cp:holdscan")
	if n, err := sweeper.Reap(ctx); err != nil || n != 1 {
		t.Fatalf("full scan closed %d holds (%v), want 1", n, err)
	}
	if got := balance(t, s, a.ID); got != 3 {
		t.Fatalf("balance %d, want 3: the expired hold must come back", got)
	}

	// A listed slot, empty and unused for over an hour, leaves the list;
	// a hold placed there since keeps it listed.
	fresh := billing.New(r.Client, billing.Config{HoldTTL: time.Minute})
	h, err := fresh.Hold(ctx, a.ID, "req-2", billing.Call{Op: "blur-plates"})
	if err != nil {
		t.Fatal(err)
	}
	if err := fresh.Release(ctx, h); err != nil {
		t.Fatal(err)
	}
	sweeper.SetNow(func() time.Time { return time.Now().Add(2 * time.Hour) })
	r.Client.Set(ctx, "cp:holdscan", 1, time.Hour)
	if _, err := sweeper.Reap(ctx); err != nil {
		t.Fatal(err)
	}
	if listed := r.Client.ZRange(ctx, "cp:holdslots", 0, -1).Val(); len(listed) != 0 {
		t.Errorf("cp:holdslots %v: an empty slot unused for two hours should leave the list", listed)
	}
	fresh2 := billing.New(r.Client, billing.Config{HoldTTL: time.Minute})
	if _, err := fresh2.Hold(ctx, a.ID, "req-3", billing.Call{Op: "blur-plates"}); err != nil {
		t.Fatal(err)
	}
	if n, err := s.OpenHolds(ctx); err != nil || n != 1 {
		t.Errorf("OpenHolds %d (%v) after a hold in a slot listed again, want 1", n, err)
	}
}

// TestRunSweeps checks that Run, the loop every web process runs, returns
// expired holds and stops when its context ends.
func TestRunSweeps(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{HoldTTL: time.Minute})
	a, _ := createAccount(t, s, 1)
	if _, err := s.Hold(ctx, a.ID, "req-dead", billing.Call{Op: "blur-plates"}); err != nil {
		t.Fatal(err)
	}
	sweeper := billing.New(r.Client, billing.Config{HoldTTL: time.Minute, ReapInterval: 10 * time.Millisecond})
	sweeper.SetNow(func() time.Time { return time.Now().Add(2 * time.Minute) })
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sweeper.Run(runCtx) }()
	// The first sweep runs at once; the deadline only bounds a broken Run.
	for deadline := time.Now().Add(10 * time.Second); balance(t, s, a.ID) != 1; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("Run did not return the expired hold")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v after cancel, want nil", err)
	}
}

// TestCloseRaces races Capture, Release and the expiry sweep on one hold,
// many times over: the hold is charged at most once, and exactly once
// whenever Capture reports success.
func TestCloseRaces(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{HoldTTL: time.Minute})
	sweeper := billing.New(r.Client, billing.Config{HoldTTL: time.Minute})
	sweeper.SetNow(func() time.Time { return time.Now().Add(2 * time.Minute) })
	a, _ := createAccount(t, s, 1000)

	want := int64(1000)
	captures := 0
	for i := range 40 {
		h, err := s.Hold(ctx, a.ID, "req", billing.Call{Op: "blur-plates"})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var capErr error
		wg.Add(4)
		go func() { defer wg.Done(); _, capErr = s.Capture(ctx, h) }()
		go func() { defer wg.Done(); _ = s.Release(ctx, h) }()
		go func() { defer wg.Done(); _, _ = sweeper.Reap(ctx) }()
		go func() { defer wg.Done(); _, _ = s.Capture(ctx, h) }()
		wg.Wait()
		if capErr == nil {
			want--
			captures++
		} else if !errors.Is(capErr, billing.ErrHoldClosed) {
			t.Fatalf("round %d: Capture: %v", i, capErr)
		}
		if got := balance(t, s, a.ID); got != want {
			t.Fatalf("round %d: balance %d, want %d (capture succeeded: %v)", i, got, want, capErr == nil)
		}
	}
	k := kinds(t, s, a.ID)
	if k[billing.KindCapture] != captures || k[billing.KindCapture]+k[billing.KindRelease]+k[billing.KindExpire] != 40 {
		t.Fatalf("ledger kinds %v after 40 holds with %d successful captures; want every hold closed exactly once", k, captures)
	}
}

func TestPrice(t *testing.T) {
	s, _ := newService(t, billing.Config{CostPerOp: map[string]int64{"car-shadow": 3}, DefaultCost: 2})
	for _, c := range []struct {
		call billing.Call
		name string
		want int64
	}{
		{billing.Call{Op: "car-shadow"}, "car-shadow", 3},
		{billing.Call{Op: "blur-plates"}, "blur-plates", 2},
		{billing.Call{Op: "car-shadow", PlateOp: "blur-plates"}, "car-shadow+blur-plates", 5},
		{billing.Call{Op: "car-cutout", PlateOp: "plate-logo"}, "car-cutout+plate-logo", 4},
	} {
		if got := s.Price(c.call); got != c.want {
			t.Errorf("Price(%+v) = %d, want %d", c.call, got, c.want)
		}
		if got := c.call.Name(); got != c.name {
			t.Errorf("%+v named %q, want %q", c.call, got, c.name)
		}
	}
	if got := billing.New(nil, billing.Config{}).Price(billing.Call{Op: "blur-plates"}); got != 1 {
		t.Errorf("default price = %d, want 1", got)
	}
	// video-blur: per started 10 seconds, DefaultCost unless set.
	for secs, want := range map[float64]int64{0.5: 2, 10: 2, 10.1: 4, 25: 6} {
		if got := s.VideoPrice(secs); got != want {
			t.Errorf("VideoPrice(%g) = %d, want %d", secs, got, want)
		}
	}
	if got := billing.New(nil, billing.Config{VideoCostPer10s: 5}).VideoPrice(21); got != 15 {
		t.Errorf("VideoPrice(21) at 5 a 10 s = %d, want 15", got)
	}
}

func TestAddCredits(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{})
	a, _ := createAccount(t, s, 2)
	if got, err := s.AddCredits(ctx, a.ID, 10, "admin-1"); err != nil || got != 12 {
		t.Fatalf("AddCredits(10) = %d, %v; want 12", got, err)
	}
	if got, err := s.AddCredits(ctx, a.ID, -12, "admin-2"); err != nil || got != 0 {
		t.Fatalf("AddCredits(-12) = %d, %v; want 0", got, err)
	}
	_, err := s.AddCredits(ctx, a.ID, -1, "admin-3")
	wantCode(t, err, carphoto.EInvalidParams)
	_, err = s.AddCredits(ctx, "acct_nosuchaccount", 1, "admin-4")
	wantCode(t, err, carphoto.ENotFound)
	if got := balance(t, s, a.ID); got != 0 {
		t.Fatalf("balance %d, want 0", got)
	}
	if k := kinds(t, s, a.ID); k[billing.KindAdmin] != 3 {
		t.Fatalf("ledger kinds %v, want 3 admin entries (creation, +10, -12)", k)
	}
}

// TestCompanionTopUp is the companion app's side of the contract: it tops up
// with HINCRBY on the account hash, and the API sees it at once.
func TestCompanionTopUp(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{})
	a, key := createAccount(t, s, 0)
	if err := r.Client.HIncrBy(ctx, "cp:acct:{"+a.ID+"}", "credits", 7).Err(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Authenticate(ctx, key)
	if err != nil || got.Credits != 7 {
		t.Fatalf("after the app's top-up Authenticate = %+v, %v; want 7 credits", got, err)
	}
	if _, err := s.Hold(ctx, a.ID, "req", billing.Call{Op: "blur-plates"}); err != nil {
		t.Fatalf("Hold after top-up: %v", err)
	}
}

func TestRateLimit(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{RateLimitPerMinute: 60})
	a, _ := createAccount(t, s, 0)
	b, _ := createAccount(t, s, 0)
	for i := 1; i <= 64; i++ {
		rl, err := s.Allow(ctx, a.KeyID)
		if err != nil {
			t.Fatal(err)
		}
		if rl.Limit != 60 {
			t.Fatalf("request %d: limit %d, want 60", i, rl.Limit)
		}
		if i <= 60 && (!rl.Allowed || rl.Remaining != 60-i) {
			t.Fatalf("request %d: allowed %v, remaining %d; want allowed with %d remaining", i, rl.Allowed, rl.Remaining, 60-i)
		}
		if i > 60 && (rl.Allowed || rl.RetryAfter <= 0) {
			t.Fatalf("request %d: allowed %v, retry after %v; want refused with a retry time", i, rl.Allowed, rl.RetryAfter)
		}
	}
	if rl, err := s.Allow(ctx, b.KeyID); err != nil || !rl.Allowed || rl.Remaining != 59 {
		t.Fatalf("another key: %+v, %v; want allowed with 59 remaining", rl, err)
	}
}

// pngOf returns a w×h PNG.
func pngOf(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func TestAssets(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{})
	a, _ := createAccount(t, s, 0)
	other, _ := createAccount(t, s, 0)
	data := pngOf(t, 52, 11)

	got, err := s.CreateAsset(ctx, a.ID, billing.AssetDesign, `C:\designs\dealer.png`, data)
	if err != nil {
		t.Fatalf("CreateAsset: %v", err)
	}
	if got.ID == "" || got.Kind != billing.AssetDesign || got.Name != "dealer.png" || got.ContentType != "image/png" ||
		got.Bytes != int64(len(data)) || got.Width != 52 || got.Height != 11 || got.CreatedAt.IsZero() {
		t.Fatalf("CreateAsset = %+v, want a 52×11 image/png named dealer.png", got)
	}
	list, err := s.Assets(ctx, a.ID)
	if err != nil || len(list) != 1 || list[0] != got {
		t.Fatalf("Assets = %+v, %v; want [%+v]", list, err, got)
	}
	if one, err := s.Asset(ctx, a.ID, got.ID); err != nil || one != got {
		t.Fatalf("Asset = %+v, %v; want %+v", one, err, got)
	}
	if b, err := s.AssetData(ctx, a.ID, got.ID, billing.AssetDesign); err != nil || !bytes.Equal(b, data) {
		t.Fatalf("AssetData: %v; want the uploaded bytes back", err)
	}

	// Another account sees exactly what it would see for an unknown id.
	_, errOther := s.Asset(ctx, other.ID, got.ID)
	_, errUnknown := s.Asset(ctx, other.ID, "asset_aaaaaaaaaaaaaaaa")
	wantCode(t, errOther, carphoto.ENotFound)
	wantCode(t, errUnknown, carphoto.ENotFound)
	_, errOther = s.AssetData(ctx, other.ID, got.ID, billing.AssetDesign)
	wantCode(t, errOther, carphoto.EInvalidParams)
	if msg := carphoto.ErrorMessage(errOther); msg != `logoAssetId "`+got.ID+`" is not in your Assets library` {
		t.Fatalf("AssetData message %q", msg)
	}
	wantCode(t, s.DeleteAsset(ctx, other.ID, got.ID), carphoto.ENotFound)
	if list, _ := s.Assets(ctx, other.ID); len(list) != 0 {
		t.Fatalf("another account lists %d assets, want 0", len(list))
	}

	if err := s.DeleteAsset(ctx, a.ID, got.ID); err != nil {
		t.Fatalf("DeleteAsset: %v", err)
	}
	_, err = s.Asset(ctx, a.ID, got.ID)
	wantCode(t, err, carphoto.ENotFound)
	_, err = s.AssetData(ctx, a.ID, got.ID, billing.AssetDesign)
	wantCode(t, err, carphoto.EInvalidParams)
	if list, _ := s.Assets(ctx, a.ID); len(list) != 0 {
		t.Fatalf("after delete %d assets listed, want 0", len(list))
	}
}

func TestAssetRefusals(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{MaxAssetBytes: 2000, MaxAssetPixels: 100 * 100})
	a, _ := createAccount(t, s, 0)
	for _, tc := range []struct {
		name string
		data []byte
		code string
	}{
		{"not an image", []byte("GIF89a not really"), carphoto.EInvalidParams},
		{"empty", nil, carphoto.EInvalidParams},
		{"over the byte cap", append(pngOf(t, 10, 10), make([]byte, 2000)...), carphoto.EPayloadTooLarge},
		{"over the pixel cap", pngOf(t, 101, 100), carphoto.EInvalidParams},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.CreateAsset(ctx, a.ID, billing.AssetDesign, "x.png", tc.data)
			wantCode(t, err, tc.code)
		})
	}
	if list, _ := s.Assets(ctx, a.ID); len(list) != 0 {
		t.Fatalf("%d assets saved, want 0", len(list))
	}
}

// A backdrop is held to its own limits, and each field takes only its
// own kind, the error naming the kind the asset is; an asset stored
// before kinds existed reads as a design.
func TestAssetKinds(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{MaxAssetBytes: 2000, MaxAssetPixels: 100 * 100, MaxBackdropBytes: 1 << 20, MaxBackdropPixels: 400 * 300})
	a, _ := createAccount(t, s, 0)

	backdrop := pngOf(t, 400, 300)
	bd, err := s.CreateAsset(ctx, a.ID, billing.AssetBackdrop, "studio.png", backdrop)
	if err != nil || bd.Kind != billing.AssetBackdrop {
		t.Fatalf("CreateAsset(backdrop 400×300) = %+v, %v; want a backdrop (over the design limits, within the backdrop's)", bd, err)
	}
	_, err = s.CreateAsset(ctx, a.ID, billing.AssetDesign, "studio.png", backdrop)
	wantCode(t, err, carphoto.EInvalidParams) // a design may have 10000 pixels
	_, err = s.CreateAsset(ctx, a.ID, billing.AssetBackdrop, "big.png", pngOf(t, 401, 300))
	wantCode(t, err, carphoto.EInvalidParams)
	if msg := carphoto.ErrorMessage(err); !strings.Contains(msg, "a backdrop asset may have at most 120000 pixels") {
		t.Errorf("oversize backdrop message %q", msg)
	}
	_, err = s.CreateAsset(ctx, a.ID, "wallpaper", "x.png", pngOf(t, 4, 4))
	wantCode(t, err, carphoto.EInvalidParams)

	design, err := s.CreateAsset(ctx, a.ID, billing.AssetDesign, "logo.png", pngOf(t, 40, 10))
	if err != nil {
		t.Fatal(err)
	}
	if b, err := s.AssetData(ctx, a.ID, bd.ID, billing.AssetBackdrop); err != nil || !bytes.Equal(b, backdrop) {
		t.Fatalf("AssetData(backdrop as backdrop): %v", err)
	}
	_, err = s.AssetData(ctx, a.ID, bd.ID, billing.AssetDesign)
	wantCode(t, err, carphoto.EInvalidParams)
	if msg, want := carphoto.ErrorMessage(err), `logoAssetId "`+bd.ID+`" is a backdrop asset, not a design`; !strings.HasPrefix(msg, want) {
		t.Errorf("backdrop as design: %q, want it to start %q", msg, want)
	}
	_, err = s.AssetData(ctx, a.ID, design.ID, billing.AssetBackdrop)
	wantCode(t, err, carphoto.EInvalidParams)
	if msg, want := carphoto.ErrorMessage(err), `backgroundAssetId "`+design.ID+`" is a design asset, not a backdrop`; !strings.HasPrefix(msg, want) {
		t.Errorf("design as backdrop: %q, want it to start %q", msg, want)
	}

	// Stored before kinds: no kind field at all.
	if err := r.Client.HDel(ctx, "cp:asset:{"+a.ID+"}:"+design.ID, "kind").Err(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Asset(ctx, a.ID, design.ID); err != nil || got.Kind != billing.AssetDesign {
		t.Fatalf("asset without a stored kind = %+v, %v; want a design", got, err)
	}
	if _, err := s.AssetData(ctx, a.ID, design.ID, billing.AssetDesign); err != nil {
		t.Fatalf("asset without a stored kind as a design: %v", err)
	}
	_, err = s.AssetData(ctx, a.ID, design.ID, billing.AssetBackdrop)
	wantCode(t, err, carphoto.EInvalidParams)
}

// TestAssetCountCap races uploads against a full library: never more than
// MaxAssets are kept.
func TestAssetCountCap(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{MaxAssets: 3})
	a, _ := createAccount(t, s, 0)
	data := pngOf(t, 4, 4)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = s.CreateAsset(ctx, a.ID, billing.AssetDesign, "d.png", data) }()
	}
	wg.Wait()
	full := 0
	for _, err := range errs {
		if err != nil {
			wantCode(t, err, carphoto.EAssetLimitReached)
			full++
		}
	}
	if list, _ := s.Assets(ctx, a.ID); len(list) != 3 || full != 5 {
		t.Fatalf("%d assets kept and %d refused, want 3 and 5", len(list), full)
	}
}

// An amount or balance past MaxCredits is the caller's mistake (400), not
// a store failure, and changes nothing.
func TestAddCreditsOverflow(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{})
	a, _ := createAccount(t, s, 25)
	for _, amount := range []int64{math.MaxInt64, math.MinInt64, billing.MaxCredits + 1, billing.MaxCredits - 24} {
		_, err := s.AddCredits(ctx, a.ID, amount, "admin-big")
		wantCode(t, err, carphoto.EInvalidParams)
	}
	if _, _, err := s.CreateAccount(ctx, "Big Motors", billing.MaxCredits+1); carphoto.ErrorCode(err) != carphoto.EInvalidParams {
		t.Fatalf("CreateAccount(MaxCredits+1): %v, want invalid_params", err)
	}
	if got, err := s.AddCredits(ctx, a.ID, billing.MaxCredits-25, "admin-max"); err != nil || got != billing.MaxCredits {
		t.Fatalf("AddCredits up to MaxCredits = %d, %v; want %d", got, err, billing.MaxCredits)
	}
	// A balance the companion app pushed near int64's end still refuses
	// cleanly instead of overflowing HINCRBY.
	if err := r.Client.HSet(ctx, "cp:acct:{"+a.ID+"}", "credits", int64(math.MaxInt64-1)).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := s.AddCredits(ctx, a.ID, 5, "admin-over")
	wantCode(t, err, carphoto.EInvalidParams)
}

// The cap on photo requests in flight holds per key and frees on Leave;
// requests over it wait for a slot in arrival order, and one whose
// deadline passes while waiting leaves the queue; a slot or a ticket whose
// process died lapses (InFlightTTL, the ticket's lease).
func TestInFlightCap(t *testing.T) {
	ctx := context.Background()
	s, r := newService(t, billing.Config{MaxInFlightPerKey: 2, InFlightTTL: time.Minute})
	var skew atomic.Int64 // the service's clock runs this far ahead
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	s.SetNow(now)
	a, _ := createAccount(t, s, 0)
	b, _ := createAccount(t, s, 0)
	queued := func() int64 {
		t.Helper()
		n, err := r.Client.ZCard(ctx, "cp:inqueue:{"+a.KeyID+"}").Result()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	first, err := s.Enter(ctx, a.KeyID, "req-1")
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.Enter(ctx, a.KeyID, "req-2")
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	start := time.Now()
	_, err = s.Enter(wctx, a.KeyID, "req-3")
	cancel()
	if !errors.Is(err, billing.ErrInFlightWait) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("third request: %v; want ErrInFlightWait at its deadline", err)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("third request gave up after %v, want it to wait until its deadline (200ms)", waited)
	}
	if n := queued(); n != 0 {
		t.Errorf("%d tickets queued after the waiter gave up, want 0", n)
	}
	if _, err := s.Enter(ctx, b.KeyID, "req-b"); err != nil {
		t.Fatalf("another key: %v", err)
	}

	// Three waiters, in this order, enter in this order as slots free.
	order := make(chan string, 3)
	for i, id := range []string{"w-1", "w-2", "w-3"} {
		go func() {
			if _, err := s.Enter(ctx, a.KeyID, id); err != nil {
				t.Error(err)
			}
			order <- id
		}()
		for deadline := time.Now().Add(5 * time.Second); queued() != int64(i+1); time.Sleep(time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("waiter %s did not queue", id)
			}
		}
	}
	for range 2 { // Leave twice: the second does nothing
		if err := s.Leave(ctx, first); err != nil {
			t.Fatal(err)
		}
	}
	if id := <-order; id != "w-1" {
		t.Fatalf("first slot freed went to %s, want w-1", id)
	}
	if err := s.Leave(ctx, second); err != nil {
		t.Fatal(err)
	}
	if id := <-order; id != "w-2" {
		t.Fatalf("second slot freed went to %s, want w-2", id)
	}
	select {
	case id := <-order:
		t.Fatalf("%s entered with both slots taken", id)
	case <-time.After(100 * time.Millisecond):
	}

	// w-1 and w-2 are never left (their process died): a minute on, they
	// no longer count, and w-3 enters.
	skew.Store(int64(time.Minute + time.Second))
	if id := <-order; id != "w-3" {
		t.Fatalf("after InFlightTTL: %s entered, want w-3", id)
	}

	// A ticket whose process died before its turn (its lease lapsed) does
	// not hold up those behind it.
	fourth, err := s.Enter(ctx, a.KeyID, "req-4") // with w-3, both slots
	if err != nil {
		t.Fatal(err)
	}
	r.Client.ZAdd(ctx, "cp:inqueue:{"+a.KeyID+"}", redis.Z{Score: 0, Member: "dead"})
	r.Client.ZAdd(ctx, "cp:inlease:{"+a.KeyID+"}", redis.Z{Score: float64(now().Add(-time.Second).UnixMilli()), Member: "dead"})
	if err := s.Leave(ctx, fourth); err != nil {
		t.Fatal(err)
	}
	wctx, cancel = context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := s.Enter(wctx, a.KeyID, "req-5"); err != nil {
		t.Fatalf("behind a lapsed ticket: %v", err)
	}
	if err := s.Leave(ctx, billing.InFlight{}); err != nil {
		t.Fatalf("Leave of the zero InFlight: %v", err)
	}
}

func TestAdminRateLimit(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{AdminRateLimitPerMinute: 3})
	a, _ := createAccount(t, s, 0)
	for i := 1; i <= 4; i++ {
		rl, err := s.AllowAdmin(ctx)
		if err != nil || rl.Allowed != (i <= 3) {
			t.Fatalf("admin call %d: %+v, %v; want allowed only for the first 3", i, rl, err)
		}
	}
	if rl, err := s.Allow(ctx, a.KeyID); err != nil || !rl.Allowed {
		t.Fatalf("a client key after the admin budget ran out: %+v, %v; want allowed", rl, err)
	}
}

// A slot freed in one web process is taken by a request waiting in
// another at once (Redis pub/sub), not at its next poll.
func TestInFlightWakeAcrossProcesses(t *testing.T) {
	ctx := context.Background()
	one, r := newService(t, billing.Config{MaxInFlightPerKey: 1})
	two := billing.New(r.Client, billing.Config{MaxInFlightPerKey: 1})
	a, _ := createAccount(t, one, 0)
	held, err := one.Enter(ctx, a.KeyID, "req-1")
	if err != nil {
		t.Fatal(err)
	}
	entered := make(chan time.Time, 1)
	go func() {
		if _, err := two.Enter(ctx, a.KeyID, "req-2"); err != nil {
			t.Error(err)
		}
		entered <- time.Now()
	}()
	// Let the waiter settle into its slowest poll.
	time.Sleep(time.Second)
	left := time.Now()
	if err := one.Leave(ctx, held); err != nil {
		t.Fatal(err)
	}
	select {
	case at := <-entered:
		if d := at.Sub(left); d > 100*time.Millisecond {
			t.Errorf("the waiter in the other process entered %v after the slot freed, want at once", d)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the waiter in the other process never entered")
	}
}

// A hold is named before it is placed: placing it again (a try whose
// answer was lost) reserves nothing more, and a release that arrives
// before the placing leaves a mark, so the hold reserves nothing.
func TestHoldNamedBeforePlaced(t *testing.T) {
	ctx := context.Background()
	s, _ := newService(t, billing.Config{})
	a, _ := createAccount(t, s, 5)
	h := s.NewHold(a.ID, "req-1", billing.Call{Op: "blur-plates"})
	for range 2 {
		if left, err := s.Place(ctx, h); err != nil || left != 4 {
			t.Fatalf("Place: %d, %v; want 4 left", left, err)
		}
	}
	if err := s.Release(ctx, h); err != nil {
		t.Fatal(err)
	}
	if got := balance(t, s, a.ID); got != 5 {
		t.Fatalf("balance %d after the release, want 5", got)
	}

	late := s.NewHold(a.ID, "req-2", billing.Call{Op: "blur-plates"})
	if err := s.Release(ctx, late); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Place(ctx, late); err != nil {
		t.Fatal(err)
	}
	if got := balance(t, s, a.ID); got != 5 {
		t.Errorf("balance %d after a hold placed behind its release, want 5: it reserves nothing", got)
	}
	if _, err := s.Capture(ctx, late); err == nil {
		t.Error("captured a hold released before it was placed")
	}
	if n, _ := s.OpenHolds(ctx); n != 0 {
		t.Errorf("%d holds open, want 0", n)
	}
}

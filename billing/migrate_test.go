package billing_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/billing"
)

// TestMigrateLayout writes an account as the code before Redis Cluster
// support left it (layout 1: no hash tags, one global holds index) and
// checks that after MigrateLayout everything works as before: the key
// authenticates, the balance and ledger are there, an open hold is
// captured once and another is expired by the sweep, the asset is the
// account's. A second run moves nothing.
func TestMigrateLayout(t *testing.T) {
	if billing.Layout != "2" {
		t.Fatalf("Layout %s: this test writes layout 1 for layout 2", billing.Layout)
	}
	s, r := newService(t, billing.Config{})
	ctx := context.Background()
	now := time.Now()
	s.SetNow(func() time.Time { return now })

	const acct, key = "acct_oldlayout0000000", "cp_live_0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefg"
	sum := sha256.Sum256([]byte(key))
	hash := hex.EncodeToString(sum[:])
	exp := now.Add(time.Minute).UnixMilli()
	old := func(p redis.Pipeliner) error {
		p.HSet(ctx, "cp:acct:"+acct, "name", "Old Motors", "credits", 8, "key_hash", hash, "created_at", now.UTC().Format(time.RFC3339Nano))
		p.Set(ctx, "cp:key:"+hash, acct, 0)
		p.XAdd(ctx, &redis.XAddArgs{Stream: "cp:ledger:" + acct, Values: []any{"kind", "admin", "request_id", "create-account", "op", "", "amount", 10, "delta", 10, "balance", 10, "hold_id", "", "at", now.UnixMilli()}})
		for _, h := range []string{"hold_capture", "hold_expire"} {
			p.HSet(ctx, "cp:hold:"+h, "account", acct, "request_id", "req_"+h, "op", "blur-plates", "amount", 1, "state", "held", "expires_at", exp)
			p.ZAdd(ctx, "cp:holds", redis.Z{Score: float64(exp), Member: h})
		}
		p.ZAdd(ctx, "cp:holds", redis.Z{Score: float64(exp), Member: "hold_gone"})
		p.ZAdd(ctx, "cp:assets:"+acct, redis.Z{Score: float64(now.UnixMilli()), Member: "asset_old"})
		p.HSet(ctx, "cp:asset:asset_old", "account", acct, "name", "logo.png", "content_type", "image/png", "bytes", 3,
			"width", 1, "height", 1, "created_at", now.UnixMilli(), "data", "png")
		p.HSet(ctx, "cp:idem:"+acct+":abc", "fp", "x", "state", "done")
		p.Expire(ctx, "cp:idem:"+acct+":abc", time.Hour)
		return nil
	}
	// A plain pipeline: on a cluster the old names live on many slots.
	if _, err := r.Client.Pipelined(ctx, old); err != nil {
		t.Fatalf("write layout 1: %v", err)
	}

	m, err := billing.MigrateLayout(ctx, r.Client)
	if err != nil {
		t.Fatal(err)
	}
	// acct, ledger, assets, asset, 2 holds, idem.
	if m.Moved != 7 || m.Holds != 2 || m.Conflicts != 0 {
		t.Errorf("migration %+v, want 7 keys moved, 2 open holds indexed, no conflicts", m)
	}
	if ok, err := billing.LayoutCurrent(ctx, r.Client); !ok || err != nil {
		t.Errorf("LayoutCurrent after the migration: %v, %v", ok, err)
	}

	a, err := s.Authenticate(ctx, key)
	if err != nil || a.ID != acct || a.Credits != 8 {
		t.Fatalf("Authenticate after migration: %+v, %v; want %s with 8 credits", a, err, acct)
	}
	if rem, err := s.CaptureID(ctx, acct, "hold_capture"); err != nil || rem != 8 {
		t.Errorf("CaptureID of a migrated hold: %d, %v; want 8 left", rem, err)
	}
	now = now.Add(2 * time.Minute)
	if n, err := s.Reap(ctx); err != nil || n != 1 {
		t.Errorf("Reap after expiry: %d, %v; want the migrated open hold expired", n, err)
	}
	if got := balance(t, s, acct); got != 9 {
		t.Errorf("balance %d, want 9 (8, one hold captured, one expired back)", got)
	}
	if k := kinds(t, s, acct); k[billing.KindAdmin] != 1 || k[billing.KindCapture] != 1 || k[billing.KindExpire] != 1 {
		t.Errorf("ledger kinds %v: want the old entry and the new capture and expiry", k)
	}
	if n, _ := s.OpenHolds(ctx); n != 0 {
		t.Errorf("%d holds open, want 0", n)
	}
	if as, err := s.Assets(ctx, acct); err != nil || len(as) != 1 || as[0].Name != "logo.png" {
		t.Errorf("Assets after migration: %+v, %v", as, err)
	}
	if data, err := s.AssetData(ctx, acct, "asset_old", billing.AssetDesign); err != nil || string(data) != "png" {
		t.Errorf("AssetData after migration: %q, %v", data, err)
	}
	if ttl := r.Client.TTL(ctx, "cp:idem:{"+acct+"}:abc").Val(); ttl <= 0 {
		t.Errorf("idempotency record after migration: TTL %v, want it moved with its TTL", ttl)
	}
	for _, k := range []string{"cp:acct:" + acct, "cp:holds", "cp:hold:hold_expire"} {
		if r.Client.Exists(ctx, k).Val() != 0 {
			t.Errorf("layout-1 key %s left", k)
		}
	}

	m, err = billing.MigrateLayout(ctx, r.Client)
	if err != nil || m != (billing.Migration{}) {
		t.Errorf("second run: %+v, %v; want nothing to do", m, err)
	}
}

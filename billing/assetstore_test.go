package billing_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto"
	"carphoto/billing"
	"carphoto/objstore"
)

// An asset's image is in the store and only its record in Redis; the
// account's images together are held to MaxAssetStorageBytes, refused
// with asset_limit_reached naming it, also when uploads race; deleting an
// asset frees its bytes and its object.
func TestAssetStorageQuota(t *testing.T) {
	ctx := context.Background()
	store := localAssets(t)
	data := pngOf(t, 64, 64)
	size := int64(len(data))
	s, r := newService(t, billing.Config{MaxAssetStorageBytes: 3*size + size/2, Assets: store})
	a, _ := createAccount(t, s, 0)

	first, err := s.CreateAsset(ctx, a.ID, billing.AssetDesign, "d.png", data)
	if err != nil {
		t.Fatal(err)
	}
	fields := r.Client.HGetAll(ctx, "cp:asset:{"+a.ID+"}:"+first.ID).Val()
	for k, v := range fields {
		if int64(len(v)) >= size/2 {
			t.Errorf("the record's field %s holds %d bytes: the image is in Redis", k, len(v))
		}
	}

	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Add(1)
		go func() { defer wg.Done(); _, errs[i] = s.CreateAsset(ctx, a.ID, billing.AssetDesign, "d.png", data) }()
	}
	wg.Wait()
	refused := 0
	for _, err := range errs {
		if err == nil {
			continue
		}
		refused++
		wantCode(t, err, carphoto.EAssetLimitReached)
		if msg := carphoto.ErrorMessage(err); !strings.Contains(msg, "MAX_ASSET_STORAGE_BYTES") {
			t.Errorf("refusal %q does not name MAX_ASSET_STORAGE_BYTES", msg)
		}
	}
	list, _ := s.Assets(ctx, a.ID)
	if len(list) != 3 || refused != 4 {
		t.Fatalf("%d assets kept and %d refused, want 3 (the quota) and 4", len(list), refused)
	}
	if n := objects(t, store); n != 3 {
		t.Errorf("%d objects in the store, want 3: a refused upload leaves nothing", n)
	}

	if err := s.DeleteAsset(ctx, a.ID, list[0].ID); err != nil {
		t.Fatal(err)
	}
	if n := objects(t, store); n != 2 {
		t.Errorf("%d objects in the store after a delete, want 2", n)
	}
	if _, err := s.CreateAsset(ctx, a.ID, billing.AssetDesign, "d.png", data); err != nil {
		t.Errorf("after a delete freed its bytes: %v", err)
	}
	_, err = s.CreateAsset(ctx, a.ID, billing.AssetDesign, "d.png", data)
	wantCode(t, err, carphoto.EAssetLimitReached)
}

// TestMigrateAssets writes assets as the code before the asset store left
// them (the image in the record's data field) beside a balance, and
// checks that MigrateAssets moves every image to the store, readable as
// before, drops it from Redis, counts its bytes, leaves the balance and
// ledger alone, and moves nothing on a second run. An image the store
// does not give back whole stays in Redis.
func TestMigrateAssets(t *testing.T) {
	ctx := context.Background()
	store := localAssets(t)
	s, r := newService(t, billing.Config{Assets: store, MaxAssetStorageBytes: 1 << 20})
	a, _ := createAccount(t, s, 7)
	acctBefore := r.Client.HGetAll(ctx, "cp:acct:{"+a.ID+"}").Val()
	ledgerBefore := r.Client.XLen(ctx, "cp:ledger:{"+a.ID+"}").Val()
	images := map[string][]byte{"asset_old1": pngOf(t, 30, 20), "asset_old2": pngOf(t, 300, 200)}
	now := time.Now()
	for id, data := range images {
		r.Client.ZAdd(ctx, "cp:assets:{"+a.ID+"}", redis.Z{Score: float64(now.UnixMilli()), Member: id})
		r.Client.HSet(ctx, "cp:asset:{"+a.ID+"}:"+id, "account", a.ID, "kind", "backdrop", "name", id+".png", "content_type", "image/png",
			"bytes", len(data), "width", 30, "height", 20, "created_at", now.UnixMilli(), "data", data)
	}
	if ok, _ := s.AssetsStored(ctx); ok {
		t.Fatal("AssetsStored before any migration")
	}

	// A store that loses what it is given: nothing leaves Redis.
	bad := billing.New(r.Client, billing.Config{Assets: lossy{store}})
	if _, err := bad.MigrateAssets(ctx); err == nil {
		t.Error("MigrateAssets with a store that loses bytes: no error")
	}
	for id := range images {
		if !r.Client.HExists(ctx, "cp:asset:{"+a.ID+"}:"+id, "data").Val() {
			t.Fatalf("%s's image left Redis though the store did not give it back", id)
		}
	}

	m, err := s.MigrateAssets(ctx)
	if err != nil || m.Moved != 2 {
		t.Fatalf("MigrateAssets = %+v, %v; want 2 moved", m, err)
	}
	for id, data := range images {
		if r.Client.HExists(ctx, "cp:asset:{"+a.ID+"}:"+id, "data").Val() {
			t.Errorf("%s's image is still in Redis", id)
		}
		got, err := s.AssetData(ctx, a.ID, id, billing.AssetBackdrop)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%s after migration: %d bytes, %v; want the %d saved", id, len(got), err, len(data))
		}
	}
	if after := r.Client.HGetAll(ctx, "cp:acct:{"+a.ID+"}").Val(); !equalMaps(after, acctBefore) {
		t.Errorf("account after migration %v, before %v", after, acctBefore)
	}
	if n := r.Client.XLen(ctx, "cp:ledger:{"+a.ID+"}").Val(); n != ledgerBefore {
		t.Errorf("ledger has %d entries after migration, %d before", n, ledgerBefore)
	}
	if ok, _ := s.AssetsStored(ctx); !ok {
		t.Error("AssetsStored false after a migration that moved everything")
	}
	m, err = s.MigrateAssets(ctx)
	if err != nil || m.Moved != 0 || m.Stored != 2 {
		t.Errorf("second run = %+v, %v; want nothing moved", m, err)
	}
	// The moved bytes count: deleting both leaves room for exactly that.
	var total int64
	for _, d := range images {
		total += int64(len(d))
	}
	if got := r.Client.Get(ctx, "cp:assetbytes:{"+a.ID+"}").Val(); got != strconv.FormatInt(total, 10) {
		t.Errorf("the account's asset bytes %s, want %d", got, total)
	}
	for id := range images {
		if err := s.DeleteAsset(ctx, a.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	if n := r.Client.Exists(ctx, "cp:assetbytes:{"+a.ID+"}").Val(); n != 0 || objects(t, store) != 0 {
		t.Errorf("after deleting every asset: byte count kept %d, %d objects left", n, objects(t, store))
	}
}

// lossy is a store that keeps only half of what it is given.
type lossy struct{ objstore.Store }

func (l lossy) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	b, _ := io.ReadAll(r)
	return l.Store.Put(ctx, key, bytes.NewReader(b[:len(b)/2]))
}

// objects counts the images in a local store.
func objects(tb testing.TB, s objstore.Store) int {
	tb.Helper()
	l, ok := s.(*objstore.Local)
	if !ok {
		tb.Fatalf("objects: %T is not a local store", s)
	}
	entries, err := os.ReadDir(l.Dir)
	if err != nil {
		tb.Fatal(err)
	}
	return len(entries)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

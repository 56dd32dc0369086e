package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"carphoto/objstore"
)

// counting counts the opens of a store.
type counting struct {
	objstore.Store
	opens atomic.Int32
}

func (c *counting) Open(ctx context.Context, key string) (objstore.File, error) {
	c.opens.Add(1)
	return c.Store.Open(ctx, key)
}

// The cache reads an object once for callers that ask at once and again,
// keeps no more than its bound (the least recently read going first),
// never keeps an object over its item bound, and says a missing key is
// missing.
func TestCache(t *testing.T) {
	ctx := context.Background()
	local, err := objstore.NewLocal(filepath.Join(t.TempDir(), "assets"))
	if err != nil {
		t.Fatal(err)
	}
	st := &counting{Store: local}
	objs := map[string][]byte{"a.png": randomBytes(400), "b.png": randomBytes(400), "c.png": randomBytes(400), "big.png": randomBytes(900)}
	for k, v := range objs {
		if _, err := st.Put(ctx, k, bytes.NewReader(v)); err != nil {
			t.Fatal(err)
		}
	}
	c := objstore.NewCache(st, 1000, 800)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got, err := c.Get(ctx, "a.png"); err != nil || !bytes.Equal(got, objs["a.png"]) {
				t.Errorf("Get(a.png): %d bytes, %v", len(got), err)
			}
		}()
	}
	wg.Wait()
	if n := st.opens.Load(); n != 1 {
		t.Errorf("8 reads at once opened the object %d times, want 1", n)
	}
	c.Get(ctx, "b.png")
	c.Get(ctx, "a.png") // b is now the least recently read
	c.Get(ctx, "c.png") // 1200 bytes: b goes
	if c.Bytes() > 1000 {
		t.Errorf("the cache holds %d bytes, bound 1000", c.Bytes())
	}
	before := st.opens.Load()
	c.Get(ctx, "a.png")
	c.Get(ctx, "c.png")
	if st.opens.Load() != before {
		t.Error("a and c, the most recently read, were read from the store again")
	}
	c.Get(ctx, "b.png")
	if st.opens.Load() != before+1 {
		t.Error("b, the least recently read, was kept past the bound")
	}
	before = st.opens.Load()
	for range 2 {
		if got, err := c.Get(ctx, "big.png"); err != nil || !bytes.Equal(got, objs["big.png"]) {
			t.Fatalf("Get(big.png): %d bytes, %v", len(got), err)
		}
	}
	if st.opens.Load() != before+2 || c.Bytes() > 1000 {
		t.Errorf("an object over the item bound was kept (%d opens for 2 reads, %d bytes held)", st.opens.Load()-before, c.Bytes())
	}
	if _, err := c.Get(ctx, "gone.png"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Get(gone.png): %v, want fs.ErrNotExist", err)
	}
}

// Location.Open keeps each named store under its own prefix: one's Sweep
// never touches another's objects.
func TestLocationNames(t *testing.T) {
	ctx := context.Background()
	loc := objstore.Location{Dir: t.TempDir()}
	videos, err := loc.Open(ctx, objstore.Videos)
	if err != nil {
		t.Fatal(err)
	}
	assets, err := loc.Open(ctx, objstore.Assets)
	if err != nil {
		t.Fatal(err)
	}
	videos.Put(ctx, "v.mp4", bytes.NewReader([]byte("video")))
	assets.Put(ctx, "asset_x.png", bytes.NewReader([]byte("image")))
	if n, err := videos.Sweep(ctx, time.Now().Add(time.Hour)); err != nil || n != 1 {
		t.Fatalf("videos' sweep: %d, %v; want its one object", n, err)
	}
	if got := readAll(t, assets, "asset_x.png"); string(got) != "image" {
		t.Errorf("the asset after the videos' sweep: %q", got)
	}
	if _, err := assets.Open(ctx, "v.mp4"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a video's key in the assets' store: %v, want not there", err)
	}
}

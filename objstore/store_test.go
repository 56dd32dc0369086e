package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"carphoto/internal/testenv/s3test"
	"carphoto/objstore"
)

// TestStoreContract holds each store to the one contract the web processes
// and workers rely on: what was put reads back whole and by range, a
// missing key is fs.ErrNotExist, Path is a local file ffmpeg can read, and
// Sweep deletes what is older than its cutoff and nothing else.
func TestStoreContract(t *testing.T) {
	t.Run("local", func(t *testing.T) {
		storeContract(t, func(t *testing.T) objstore.Store {
			s, err := objstore.NewLocal(filepath.Join(t.TempDir(), "videos"))
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
	t.Run("s3", func(t *testing.T) {
		srv := s3test.New(t)
		storeContract(t, func(t *testing.T) objstore.Store {
			// One prefix per subtest: each sees an empty store.
			cfg := srv.Config("videos/" + strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
					return r
				}
				return '-'
			}, t.Name()))
			cfg.PartSize = 5 << 20 // S3's smallest, so that a few MB take several parts
			cfg.TempDir = t.TempDir()
			s, err := objstore.NewS3(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return s
		})
	})
}

func storeContract(t *testing.T, open func(t *testing.T) objstore.Store) {
	ctx := context.Background()
	t.Run("put, open, size, seek", func(t *testing.T) {
		s := open(t)
		data := randomBytes(12<<20 + 123) // over two parts, of unknown length
		n, err := s.Put(ctx, "a.in", onlyReader{bytes.NewReader(data)})
		if err != nil || n != int64(len(data)) {
			t.Fatalf("Put: %d, %v; want %d bytes", n, err, len(data))
		}
		f, err := s.Open(ctx, "a.in")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if f.Size() != int64(len(data)) {
			t.Errorf("Size %d, want %d", f.Size(), len(data))
		}
		if age := time.Since(f.ModTime()); age < -time.Minute || age > time.Minute {
			t.Errorf("ModTime %v, want about now", f.ModTime())
		}
		for _, sk := range []struct {
			off    int64
			whence int
			at     int64
		}{{0, io.SeekStart, 0}, {5<<20 + 7, io.SeekStart, 5<<20 + 7}, {-10, io.SeekEnd, int64(len(data)) - 10}, {3, io.SeekStart, 3}} {
			pos, err := f.Seek(sk.off, sk.whence)
			if err != nil || pos != sk.at {
				t.Fatalf("Seek(%d, %d): %d, %v; want %d", sk.off, sk.whence, pos, err, sk.at)
			}
			got := make([]byte, 10)
			if _, err := io.ReadFull(f, got); err != nil || !bytes.Equal(got, data[sk.at:sk.at+10]) {
				t.Errorf("10 bytes at %d: %v, %v; want what was put", sk.at, got, err)
			}
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		all, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(all, data) {
			t.Errorf("read back %d bytes (%v), want the %d put", len(all), err, len(data))
		}
	})
	t.Run("put from a file, replacing", func(t *testing.T) {
		s := open(t)
		if _, err := s.Put(ctx, "b.mp4", strings.NewReader("first")); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "result.mp4")
		data := randomBytes(6 << 20)
		os.WriteFile(path, data, 0o600)
		file, _ := os.Open(path)
		defer file.Close()
		if n, err := s.Put(ctx, "b.mp4", file); err != nil || n != int64(len(data)) {
			t.Fatalf("Put of a file: %d, %v; want %d", n, err, len(data))
		}
		if got := readAll(t, s, "b.mp4"); !bytes.Equal(got, data) {
			t.Errorf("read back %d bytes, want the %d of the second put", len(got), len(data))
		}
	})
	t.Run("served by range", func(t *testing.T) {
		s := open(t)
		data := randomBytes(1 << 20)
		s.Put(ctx, "c.mp4", bytes.NewReader(data))
		f, err := s.Open(ctx, "c.mp4")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodGet, "/result", nil)
		req.Header.Set("Range", "bytes=1000-1999")
		http.ServeContent(rec, req, "c.mp4", f.ModTime(), f)
		if rec.Code != http.StatusPartialContent || !bytes.Equal(rec.Body.Bytes(), data[1000:2000]) {
			t.Errorf("Range bytes=1000-1999: %d with %d bytes, want 206 with those 1000", rec.Code, rec.Body.Len())
		}
	})
	t.Run("missing keys", func(t *testing.T) {
		s := open(t)
		if _, err := s.Open(ctx, "nope.mp4"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open of a missing key: %v, want fs.ErrNotExist", err)
		}
		if _, _, err := s.Path(ctx, "nope.in"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Path of a missing key: %v, want fs.ErrNotExist", err)
		}
		if err := s.Delete(ctx, "nope.in"); err != nil {
			t.Errorf("Delete of a missing key: %v, want nil", err)
		}
		s.Put(ctx, "d.in", strings.NewReader("x"))
		if err := s.Delete(ctx, "d.in"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Open(ctx, "d.in"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open after Delete: %v, want fs.ErrNotExist", err)
		}
		for _, bad := range []string{"", "../x", "a/b", `a\b`, ".hidden"} {
			if _, err := s.Put(ctx, bad, strings.NewReader("x")); err == nil {
				t.Errorf("Put(%q) took a key that is not one plain name", bad)
			}
		}
	})
	t.Run("path is a local copy", func(t *testing.T) {
		s := open(t)
		data := randomBytes(300 << 10)
		s.Put(ctx, "e.in", bytes.NewReader(data))
		path, done, err := s.Path(ctx, "e.in")
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("the file at %s: %d bytes (%v), want the %d put", path, len(got), err, len(data))
		}
		done()
		if _, err := os.Stat(path); err == nil && !isUnder(path, s) {
			t.Errorf("the copy %s is still there after done()", path)
		}
		if got := readAll(t, s, "e.in"); !bytes.Equal(got, data) {
			t.Errorf("the object itself is gone or changed after done()")
		}
	})
	t.Run("an interrupted put leaves nothing", func(t *testing.T) {
		s := open(t)
		cctx, cancel := context.WithCancel(ctx)
		r := &cancelAfter{r: bytes.NewReader(randomBytes(8 << 20)), n: 6 << 20, cancel: cancel}
		if _, err := s.Put(cctx, "f.in", r); err == nil {
			t.Fatal("Put went through after its context was cancelled")
		}
		if _, err := s.Open(ctx, "f.in"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("Open after an interrupted Put: %v, want fs.ErrNotExist (no half object)", err)
		}
	})
	t.Run("sweep by age", func(t *testing.T) {
		s := open(t)
		s.Put(ctx, "old.mp4", strings.NewReader("old"))
		s.Put(ctx, "old.in", strings.NewReader("old"))
		// S3 keeps write times to the second: the cutoff falls on a
		// second boundary after the old objects and before the new one.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 100*time.Millisecond)))
		cutoff := time.Now().Truncate(time.Second)
		s.Put(ctx, "new.mp4", strings.NewReader("new"))
		n, err := s.Sweep(ctx, cutoff)
		if err != nil || n != 2 {
			t.Errorf("Sweep: %d, %v; want the 2 old objects deleted", n, err)
		}
		for key, want := range map[string]bool{"old.mp4": false, "old.in": false, "new.mp4": true} {
			f, err := s.Open(ctx, key)
			if err == nil {
				f.Close()
			}
			if (err == nil) != want {
				t.Errorf("%s after the sweep: %v, want kept %v", key, err, want)
			}
		}
	})
}

// TestS3 covers what only the S3 store does: keys under the prefix, a sweep
// that leaves the rest of the bucket alone and drops abandoned uploads, and
// a start refused on a missing bucket or wrong keys.
func TestS3(t *testing.T) {
	srv := s3test.New(t)
	ctx := context.Background()
	cfg := srv.Config("carphoto/videos")
	s, err := objstore.NewS3(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Put(ctx, "g.mp4", strings.NewReader("result"))
	if _, err := srv.Client.StatObject(ctx, srv.Bucket, "carphoto/videos/g.mp4", minio.StatObjectOptions{}); err != nil {
		t.Errorf("g.mp4 is not under the prefix carphoto/videos/: %v", err)
	}
	srv.Client.PutObject(ctx, srv.Bucket, "someone-else/keep.txt", strings.NewReader("keep"), 4, minio.PutObjectOptions{})
	core := minio.Core{Client: srv.Client}
	if _, err := core.NewMultipartUpload(ctx, srv.Bucket, "carphoto/videos/h.in", minio.PutObjectOptions{}); err != nil {
		t.Fatal(err)
	}
	n, err := s.Sweep(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 1 {
		t.Errorf("Sweep of everything: %d, %v; want 1 object (g.mp4)", n, err)
	}
	if _, err := srv.Client.StatObject(ctx, srv.Bucket, "someone-else/keep.txt", minio.StatObjectOptions{}); err != nil {
		t.Errorf("the sweep deleted an object outside its prefix: %v", err)
	}
	for u := range srv.Client.ListIncompleteUploads(ctx, srv.Bucket, "carphoto/", true) {
		t.Errorf("upload of %s (%v) left after the sweep", u.Key, u.Err)
	}

	missing := cfg
	missing.Bucket = "carphoto-no-such-bucket"
	if _, err := objstore.NewS3(ctx, missing); err == nil || !strings.Contains(err.Error(), "no such bucket") {
		t.Errorf("NewS3 on a missing bucket: %v, want refused, saying so", err)
	}
	wrong := cfg
	wrong.SecretKey = "not-the-secret"
	if _, err := objstore.NewS3(ctx, wrong); err == nil {
		t.Error("NewS3 with a wrong secret key: no error")
	}
}

// onlyReader hides everything but Read: an upload still arriving, of
// unknown length.
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }

// cancelAfter cancels its context once n bytes have been read.
type cancelAfter struct {
	r      io.Reader
	n      int
	read   int
	cancel func()
}

func (c *cancelAfter) Read(p []byte) (int, error) {
	if c.read >= c.n {
		c.cancel()
	}
	n, err := c.r.Read(p)
	c.read += n
	return n, err
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	r := rand.NewChaCha8([32]byte{byte(n)})
	r.Read(b)
	return b
}

func readAll(t *testing.T, s objstore.Store, key string) []byte {
	t.Helper()
	f, err := s.Open(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// isUnder reports whether path is the store's own file (Local's Path hands
// out the stored file itself, which done() must leave).
func isUnder(path string, s objstore.Store) bool {
	l, ok := s.(*objstore.Local)
	return ok && filepath.Dir(path) == l.Dir
}

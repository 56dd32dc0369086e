package api

import (
	"bytes"
	"context"
	"encoding/json"
	"image"
	"image/png"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/redis/go-redis/v9"

	"carphoto/internal/service"
	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
	"carphoto/internal/testenv/s3test"
)

// noisePNG is a w×h backdrop of random pixels, stored uncompressed: its
// bytes are about w×h×3, and no layer on the way can shrink them.
func noisePNG(tb testing.TB, w, h int) []byte {
	tb.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, uint64(w*h)))
	for i := 0; i < len(img.Pix); i += 4 {
		v := r.Uint32()
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(v), uint8(v>>8), uint8(v>>16), 255
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.NoCompression}).Encode(&b, img); err != nil {
		tb.Fatal(err)
	}
	return b.Bytes()
}

// redisMeter is a TCP relay between the service's processes and their
// Redis that counts the bytes it carries both ways: what a call costs
// Redis, measured where Redis sees it.
type redisMeter struct {
	ln    net.Listener
	bytes atomic.Int64
}

// meterRedis starts a relay to rs and returns it with rs's URL through it.
func meterRedis(t *testing.T, rs *redistest.Server) (*redisMeter, string) {
	t.Helper()
	if rs.Cluster != nil {
		t.Skip("the relay speaks to one Redis; a cluster's clients follow its nodes' own addresses")
	}
	u, err := url.Parse(rs.URL)
	if err != nil {
		t.Fatal(err)
	}
	target := u.Host
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &redisMeter{ln: ln}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r, err := net.Dial("tcp", target)
				if err != nil {
					return
				}
				defer r.Close()
				done := make(chan struct{}, 2)
				// What passes is counted as it is read (countingConn),
				// never again at the end: a connection closed during the
				// measured call (a cancelled BLPOP's) would add its whole
				// past traffic.
				pipe := func(dst, src net.Conn) {
					_, _ = io.Copy(dst, src)
					// Half-closed either way ends both.
					dst.Close()
					src.Close()
					done <- struct{}{}
				}
				go pipe(r, countingConn{c, &m.bytes})
				go pipe(c, countingConn{r, &m.bytes})
				<-done
				<-done
			}()
		}
	}()
	u.Host = ln.Addr().String()
	return m, u.String()
}

// settle waits until the Redis traffic is quiet (under 20 KB in 300 ms):
// the web process's first expiry sweep, which asks every slot's index
// (about 2 MB of commands), and the processes' start-up are over, so that
// what is measured next is the call's.
func (m *redisMeter) settle(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); {
		from := m.bytes.Load()
		time.Sleep(300 * time.Millisecond)
		if m.bytes.Load()-from < 20<<10 {
			return
		}
	}
	t.Fatal("the Redis traffic did not settle within 20 s")
}

// countingConn counts what is read from it as it goes (io.Copy's total
// comes only at the end of a connection, which a pooled client keeps).
type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// A backdrop saved in the library with the S3 store, the web process and
// the worker each in a directory of its own (as on machines with no disk
// in common): the image is in the bucket under the assets' prefix and
// nowhere in Redis, the call that names it works and is charged once, and
// the call's Redis traffic does not carry the backdrop's bytes.
func TestBackdropAssetOnS3(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	s3 := s3test.New(t)
	id := backdropAssetApart(t, s3.Env("carphoto"))
	var stored []string
	for o := range s3.Client.ListObjects(context.Background(), s3.Bucket, minio.ListObjectsOptions{Prefix: "carphoto/assets/", Recursive: true}) {
		if o.Err == nil && strings.HasPrefix(strings.TrimPrefix(o.Key, "carphoto/assets/"), id) {
			stored = append(stored, o.Key)
		}
	}
	if len(stored) != 1 {
		t.Errorf("objects of %s under carphoto/assets/: %v, want its image", id, stored)
	}
}

// The same with the store a directory both processes mount, for suites
// without an S3 server.
func TestBackdropAssetApart(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	store := t.TempDir()
	id := backdropAssetApart(t, []string{"OBJECT_STORE=" + store})
	if entries, _ := os.ReadDir(store + "/assets"); len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), id) {
		t.Errorf("the assets' directory holds %v, want %s's image", entries, id)
	}
}

// backdropAssetApart runs a web process and a worker, each in a directory
// of its own, on the object store of storeEnv; saves a 2.1 MB backdrop,
// checks that no Redis key holds it, calls car-shadow on it through a
// relay that counts the Redis traffic, and returns the asset's id.
func backdropAssetApart(t *testing.T, storeEnv []string) string {
	t.Helper()
	rs := redistest.New(t, redisDB)
	meter, redisURL := meterRedis(t, rs)
	env := append([]string{rs.EnvName() + "=" + redisURL, "PORT=0", "WORKER_CONCURRENCY=1"}, storeEnv...)
	web := e2etest.StartProcIn(t, t.TempDir(), "serve", append(env, "TMPDIR="+t.TempDir())...)
	url := e2etest.WaitFor(t, web.Stdout, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	e2etest.StartProcIn(t, t.TempDir(), "worker", append(env, "TMPDIR="+t.TempDir())...)
	e2etest.WaitReady(t, url)
	cfg, _ := service.LoadConfig(e2etest.EnvOf(map[string]string{rs.EnvName(): rs.URL}))
	s := &e2etest.Service{URL: url, RS: rs, Billing: e2etest.NewBilling(rs, cfg)}
	id, key := s.Account(t, 3)

	backdrop := noisePNG(t, 1000, 700) // 2.1 MB
	status, _, body := e2etest.Post(t, url+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "studio.png", Data: backdrop}, e2etest.Field("kind", "backdrop"))
	var asset struct{ ID string }
	if status != http.StatusCreated || json.Unmarshal(body, &asset) != nil {
		t.Fatalf("save the backdrop: %d %s", status, body)
	}
	ctx := context.Background()
	for _, k := range rs.Keys(t, "*") {
		if n, _ := rs.Client.MemoryUsage(ctx, k).Result(); n > int64(len(backdrop))/4 {
			t.Errorf("Redis key %s holds %d bytes: the backdrop (%d) is in Redis", k, n, len(backdrop))
		}
	}

	photo := samplePhoto(t)
	meter.settle(t)
	before := meter.bytes.Load()
	// scale=0.5: the sample car at the default 0.8 would be enlarged past
	// 1.5×, and the answer scaled down from the backdrop's size.
	status, h, answer := e2etest.Post(t, url+"/v1/car-shadow", key, e2etest.File("image", photo), e2etest.Field("backgroundAssetId", asset.ID), e2etest.Field("format", "jpeg"), e2etest.Field("scale", "0.5"))
	traffic := meter.bytes.Load() - before
	if status != http.StatusOK || h.Get("X-Credits-Charged") != "1" {
		t.Fatalf("car-shadow on the saved backdrop: %d %.300s", status, answer)
	}
	if img, _, err := image.DecodeConfig(bytes.NewReader(answer)); err != nil || img.Width != 1000 || img.Height != 700 {
		t.Errorf("answer %+v, %v: want the backdrop's 1000×700", img, err)
	}
	// The photo and the answer each go into Redis and out again; the
	// backdrop, read by the worker from the store, does not (it would add
	// twice its bytes).
	if limit := 2*int64(len(photo)+len(answer)) + int64(len(backdrop))/4; traffic > limit {
		t.Errorf("the call moved %d bytes through Redis: photo %d and answer %d twice each, backdrop %d; want under %d (the backdrop not among them)",
			traffic, len(photo), len(answer), len(backdrop), limit)
	}
	t.Logf("Redis traffic of the call: %d bytes (photo %d, answer %d, backdrop %d)", traffic, len(photo), len(answer), len(backdrop))
	if got := s.Credits(t, id); got != 2 {
		t.Errorf("balance %d, want 2", got)
	}
	return asset.ID
}

// assetFloodEnv sizes TestAssetFlood: ASSET_FLOOD=100x15 measures the
// issue's attack (100 backdrops of 14.9 MB, 50 at once); the default is a
// small run for every test suite.
func assetFloodEnv() (n, side int) {
	if os.Getenv("ASSET_FLOOD") == "100x15" {
		return 100, 2230 // 2230×2230×3 ≈ 14.9 MB
	}
	return 24, 500 // 0.75 MB
}

// An account with no credits uploads backdrops many at once, past its
// storage quota: the ones within it are saved, the rest refused with 409
// asset_limit_reached naming MAX_ASSET_STORAGE_BYTES, never more than the
// key's MAX_IN_FLIGHT_PER_KEY at once; Redis carries a small share of the
// uploads' bytes (records, not images: under a fifth, where before it
// carried them all). Deleting one makes room again.
// With ASSET_FLOOD=100x15 and a REDIS_URL it logs Redis' used_memory and
// the web process' RSS: the measured run of issue 57.
func TestAssetFlood(t *testing.T) {
	if testing.Short() {
		t.Skip("multi-process test")
	}
	n, side := assetFloodEnv()
	backdrop := noisePNG(t, side, side)
	quota := int64(len(backdrop))*int64(n)/3 + 1
	rs := redistest.New(t, redisDB)
	meter, redisURL := meterRedis(t, rs)
	env := []string{rs.EnvName() + "=" + redisURL, "PORT=0", "OBJECT_STORE=" + t.TempDir(),
		"MAX_ASSET_STORAGE_BYTES=" + strconv.FormatInt(quota, 10), "MAX_IN_FLIGHT_PER_KEY=4", "RATE_LIMIT_PER_MINUTE=1000"}
	web := e2etest.StartProc(t, "serve", env...)
	url := e2etest.WaitFor(t, web.Stdout, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	e2etest.StartProc(t, "worker", env...) // the web process is ready with a worker to hand tasks to
	e2etest.WaitReady(t, url)
	cfg, _ := service.LoadConfig(e2etest.EnvOf(map[string]string{rs.EnvName(): rs.URL}))
	s := &e2etest.Service{URL: url, RS: rs, Billing: e2etest.NewBilling(rs, cfg)}
	_, key := s.Account(t, 0)
	memBefore := usedMemory(t, rs)
	rssIdle := e2etest.ProcStatus(t, web.Cmd.Process.Pid, "VmRSS")
	trafficBefore := meter.bytes.Load()

	// The key's uploads in flight, sampled while they run.
	var most atomic.Int64
	sampled := make(chan struct{})
	stopSampling := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stopSampling:
				return
			case <-time.After(5 * time.Millisecond):
			}
			if n := s.InFlight(t, key); n > most.Load() {
				most.Store(n)
			}
		}
	}()
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	var refusal string
	start := time.Now()
	sem := make(chan struct{}, 50)
	for range n {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			status, _, body := e2etest.Post(t, url+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "studio.png", Data: backdrop}, e2etest.Field("kind", "backdrop"))
			mu.Lock()
			defer mu.Unlock()
			codes[status]++
			if status == http.StatusConflict {
				refusal = string(body)
			}
		}()
	}
	wg.Wait()
	took := time.Since(start)
	close(stopSampling)
	<-sampled
	if m := most.Load(); m < 1 || m > 4 {
		t.Errorf("at most %d uploads of the key were in flight at once, want 1 to 4 (MAX_IN_FLIGHT_PER_KEY)", m)
	}
	traffic := meter.bytes.Load() - trafficBefore
	sent := int64(n) * int64(len(backdrop))
	kept := int(quota / int64(len(backdrop)))
	if codes[http.StatusCreated] != kept || codes[http.StatusConflict] != n-kept {
		t.Errorf("answers %v: want %d saved (the quota, %d bytes) and %d refused with 409", codes, kept, quota, n-kept)
	}
	if !strings.Contains(refusal, "asset_limit_reached") || !strings.Contains(refusal, "MAX_ASSET_STORAGE_BYTES") {
		t.Errorf("the refusal %s: want asset_limit_reached naming MAX_ASSET_STORAGE_BYTES", refusal)
	}
	// Records, slots and rate limits cost a few KB a call, more the longer
	// calls wait for a slot on a loaded machine; the images (all of them
	// went through Redis before) would be the whole.
	if traffic > sent/5 {
		t.Errorf("the uploads moved %d bytes through Redis, of %d uploaded: want the records only (under %d)", traffic, sent, sent/5)
	}
	memAfter := usedMemory(t, rs)
	rssPeak := e2etest.ProcStatus(t, web.Cmd.Process.Pid, "VmHWM")
	t.Logf("%d uploads of %d bytes, 50 sent at once, at most %d in flight, in %v: %v; Redis traffic %d bytes; used_memory %d → %d (%+.1f MB); web RSS idle %d kB, peak %d kB (+%.0f MB)",
		n, len(backdrop), most.Load(), took.Round(time.Millisecond), codes, traffic, memBefore, memAfter, float64(memAfter-memBefore)/1e6,
		rssIdle, rssPeak, float64(rssPeak-rssIdle)/1024)

	var list struct{ Assets []struct{ ID string } }
	_, _, body := e2etest.Do(t, http.MethodGet, url+"/v1/assets", key, "", nil)
	json.Unmarshal(body, &list)
	if len(list.Assets) != kept {
		t.Fatalf("%d assets listed, want %d", len(list.Assets), kept)
	}
	if status, _, body := e2etest.Do(t, http.MethodDelete, url+"/v1/assets/"+list.Assets[0].ID, key, "", nil); status != http.StatusNoContent {
		t.Fatalf("delete: %d %s", status, body)
	}
	if status, _, body := e2etest.Post(t, url+"/v1/assets", key, e2etest.Part{Name: "file", Filename: "studio.png", Data: backdrop}, e2etest.Field("kind", "backdrop")); status != http.StatusCreated {
		t.Errorf("after a delete freed its bytes: %d %s, want 201", status, body)
	}
}

// usedMemory is Redis' used_memory, or 0 where the server does not say
// (the embedded one).
func usedMemory(t *testing.T, rs *redistest.Server) int64 {
	t.Helper()
	info, err := rs.Client.Info(context.Background(), "memory").Result()
	if err != nil {
		return 0
	}
	m := regexp.MustCompile(`(?m)^used_memory:(\d+)`).FindStringSubmatch(info)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	return v
}

// A Redis holding assets as the code before the object store left them
// (the image in the record): the first web process to start moves every
// image to the store, and a call naming one works; balances are as they
// were.
func TestAssetsMovedAtStart(t *testing.T) {
	ctx := context.Background()
	rs := redistest.New(t, redisDB)
	store := t.TempDir()
	env := map[string]string{"OBJECT_STORE": store}
	cfg, err := service.LoadConfig(e2etest.EnvOf(map[string]string{rs.EnvName(): rs.URL, "OBJECT_STORE": store}))
	if err != nil {
		t.Fatal(err)
	}
	b := e2etest.NewBilling(rs, cfg)
	acct, key, err := b.CreateAccount(ctx, "Old Motors", 4)
	if err != nil {
		t.Fatal(err)
	}
	wall := wallPNG(t, 640, 400)
	rs.Client.ZAdd(ctx, "cp:assets:{"+acct.ID+"}", redis.Z{Score: 1, Member: "asset_oldwall"})
	rs.Client.HSet(ctx, "cp:asset:{"+acct.ID+"}:asset_oldwall", "account", acct.ID, "kind", "backdrop", "name", "wall.png",
		"content_type", "image/png", "bytes", len(wall), "width", 640, "height", 400, "created_at", 1, "data", wall)
	// Layout 2 already: only the assets are left to move.
	rs.Client.Set(ctx, "cp:layout", "2", 0)

	s := e2etest.StartServiceOn(t, rs, env)
	if rs.Client.HExists(ctx, "cp:asset:{"+acct.ID+"}:asset_oldwall", "data").Val() {
		t.Fatal("the image is still in Redis after the web process started")
	}
	if got, err := s.Billing.AssetData(ctx, acct.ID, "asset_oldwall", "backdrop"); err != nil || !bytes.Equal(got, wall) {
		t.Fatalf("the moved backdrop: %d bytes, %v; want the %d saved", len(got), err, len(wall))
	}
	status, _, body := e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", samplePhoto(t)), e2etest.Field("backgroundAssetId", "asset_oldwall"))
	if status != http.StatusOK {
		t.Fatalf("car-cutout on the moved backdrop: %d %.300s", status, body)
	}
	if got := s.Credits(t, acct.ID); got != 3 {
		t.Errorf("balance %d, want 3: 4 before, one call", got)
	}
}

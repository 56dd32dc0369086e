package main

// End-to-end tests: the real run(), real HTTP, the real queue and worker, on
// the Redis at REDIS_URL when set (CI) and an embedded one otherwise.

import (
	"bufio"
	"bytes"
	"carphoto/internal/testenv/imgtest"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"carphoto/billing"
	"carphoto/internal/testenv/apitest"
	"carphoto/internal/testenv/redistest"
	"carphoto/objstore"
)

// The test binary doubles as the carphoto binary for the multi-process
// tests: with CARPHOTO_E2E_ROLE set it runs that subcommand and exits.
func TestMain(m *testing.M) {
	if role := os.Getenv("CARPHOTO_E2E_ROLE"); role != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := run(ctx, []string{role}, os.Getenv, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "carphoto:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(checkAnswers(m))
}

// sideBySideAtOnce lets n of the side-by-side tests (sideBySide) run at
// once, unless -parallel says otherwise: they wait, mostly idle, on
// Asynq's recovery of a killed worker's task, and go test's default
// (GOMAXPROCS, two on a two-core machine) would queue the hang-up tests
// behind those minutes of waiting.
func sideBySideAtOnce(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// checkAnswers runs the tests with every HTTP answer they get checked
// against the OpenAPI document (status, content type, headers, JSON body),
// and fails the run on any mismatch: the document cannot drift from the
// server.
func checkAnswers(m *testing.M) int {
	c, err := apitest.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tr := &apitest.Transport{Base: http.DefaultTransport, Checker: c}
	http.DefaultTransport = tr
	sideBySideAtOnce(4)
	code := m.Run()
	stopChromium()
	checked, failures := tr.Failures()
	for _, f := range failures {
		fmt.Fprintln(os.Stderr, "answer does not match openapi.json:", f)
	}
	if len(failures) > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d of %d answers do not match openapi.json\n", len(failures), checked)
		return 1
	}
	if testing.Verbose() {
		fmt.Printf("openapi.json: all %d answers match\n", checked)
	}
	return code
}

// redisDB is this package's database on a shared real Redis.
const redisDB = 5

// service is a running carphoto under test.
type service struct {
	url string
	rs  *redistest.Server
	b   *billing.Service
	out *syncBuffer
	log *syncBuffer // the service's JSON log lines
}

// startService runs `carphoto all` in-process on port 0 with env on top of
// the test defaults, and stops it when the test ends.
func startService(t *testing.T, env map[string]string) *service {
	t.Helper()
	return startServiceOn(t, redistest.New(t, redisDB), env)
}

// startServiceOn is startService on the Redis rs.
func startServiceOn(t *testing.T, rs *redistest.Server, env map[string]string) *service {
	t.Helper()
	getenv := func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		if k == rs.EnvName() {
			return rs.URL
		}
		switch k {
		case "PORT":
			return "0"
		case "LOG_LEVEL":
			return "warn"
		}
		return ""
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	out, logs := &syncBuffer{}, &syncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"all"}, getenv, out, logs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service stopped with error: %v", err)
		}
	})
	url := waitFor(t, out, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	waitReady(t, url)
	return &service{url: url, rs: rs, b: newBilling(rs, cfg), out: out, log: logs}
}

// account creates an account with the given credits and returns its key.
func (s *service) account(t *testing.T, credits int64) (id, key string) {
	t.Helper()
	a, key, err := s.b.CreateAccount(context.Background(), "test", credits)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID, key
}

func (s *service) credits(t *testing.T, id string) int64 {
	t.Helper()
	a, err := s.b.Account(context.Background(), id)
	if err != nil {
		t.Fatalf("read balance of %s: %v", id, err)
	}
	return a.Credits
}

// waitReady polls /readyz until a worker is seen.
func waitReady(t *testing.T, url string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		res, err := http.Get(url + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s/readyz never became ready", url)
}

// waitFor waits until re matches what r has printed and returns group 1.
func waitFor(t *testing.T, r interface{ String() string }, re *regexp.Regexp) string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if m := re.FindStringSubmatch(r.String()); m != nil {
			if len(m) > 1 {
				return m[1]
			}
			return m[0]
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("never saw %v in output:\n%s", re, r.String())
	return ""
}

// syncBuffer is a bytes.Buffer safe for a writer and a polling reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// part is one multipart field: a file when filename is set.
type part struct {
	name, filename string
	data           []byte
}

func file(name string, data []byte) part { return part{name, name + ".bin", data} }
func field(name, v string) part          { return part{name: name, data: []byte(v)} }

// multipartBody encodes parts as a multipart/form-data body.
func multipartBody(t *testing.T, parts ...part) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.filename != "" {
			w, err = mw.CreateFormFile(p.name, p.filename)
		} else {
			w, err = mw.CreateFormField(p.name)
		}
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.data)
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// post sends a multipart POST and returns status, headers and body.
func post(t *testing.T, url, key string, parts ...part) (int, http.Header, []byte) {
	t.Helper()
	body, ct := multipartBody(t, parts...)
	return do(t, http.MethodPost, url, key, ct, bytes.NewReader(body))
}

func do(t *testing.T, method, url, key, contentType string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	client := &http.Client{Timeout: 60 * time.Second}
	res, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body of %s %s: %v", method, url, err)
	}
	return res.StatusCode, res.Header, b
}

// wantError asserts a JSON {error, code} failure.
func wantError(t *testing.T, status int, h http.Header, body []byte, wantStatus int, wantCode string) {
	t.Helper()
	if status != wantStatus {
		t.Errorf("status %d, want %d (body %.300s)", status, wantStatus, body)
	}
	if ct := h.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	var e struct{ Error, Code string }
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("body is not JSON {error, code}: %v: %.300s", err, body)
	}
	if e.Code != wantCode {
		t.Errorf("code %q, want %q (error %q)", e.Code, wantCode, e.Error)
	}
	if e.Error == "" {
		t.Errorf("error message is empty")
	}
}

// carPhoto returns the sample car photo (docs/samples/car.jpg: 600×399,
// one plate), which every clone has.
func carPhoto(t testing.TB) []byte { return imgtest.Sample(t, "car.jpg") }

func syntheticJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			c := color.RGBA{uint8(120 + x%40), uint8(130 + y%30), 140, 255}
			if y > h/3 && y < h*4/5 && x > w/8 && x < w*7/8 {
				c = color.RGBA{150, 20, 30, 255}
			}
			if y > h*3/5 && y < h*3/5+h/12 && x > w*2/5 && x < w*3/5 {
				c = color.RGBA{240, 240, 240, 255}
				if (x/6)%2 == 0 && y > h*3/5+3 && y < h*3/5+h/12-3 {
					c = color.RGBA{20, 20, 20, 255}
				}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 88}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// twoColourLogo is a plate design: left half blue, right half yellow.
func twoColourLogo(t testing.TB) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 200, 50))
	for y := range 50 {
		for x := range 200 {
			c := color.NRGBA{0, 60, 200, 255}
			if x >= 100 {
				c = color.NRGBA{250, 210, 0, 255}
			}
			img.Set(x, y, c)
		}
	}
	var b bytes.Buffer
	png.Encode(&b, img)
	return b.Bytes()
}

// hugePNGHeader is a valid PNG signature and IHDR claiming 40000×40000.
func hugePNGHeader() []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := []byte{0, 0, 0x9c, 0x40, 0, 0, 0x9c, 0x40, 8, 6, 0, 0, 0}
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write([]byte{0, 0, 0, 13})
	b.Write(chunk)
	crc := crc32.ChecksumIEEE(chunk)
	b.Write([]byte{byte(crc >> 24), byte(crc >> 16), byte(crc >> 8), byte(crc)})
	b.Write(bytes.Repeat([]byte{0}, 1000))
	return b.Bytes()
}

// proc is a carphoto subprocess (the test binary in a role).
type proc struct {
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
}

func startProc(t *testing.T, role string, env ...string) *proc {
	t.Helper()
	return startProcIn(t, "", role, env...)
}

// startProcIn starts the process in dir (the test's own when empty).
func startProcIn(t *testing.T, dir, role string, env ...string) *proc {
	t.Helper()
	bin, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"CARPHOTO_E2E_ROLE=" + role, "LOG_LEVEL=info"}, env...)...)
	p := &proc{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", role, tail(p.stderr.String(), 3000))
		}
	})
	return p
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// lines returns a reader over a buffer's lines so far, for assertions.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// startWeb runs `carphoto serve` as a process of its own on rs, with env
// (REDIS_URL and PORT are set here), and returns it with a handle on its
// accounts and balances.
func startWeb(t *testing.T, rs *redistest.Server, env ...string) (*proc, *service) {
	t.Helper()
	env = append([]string{rs.Env(), "PORT=0"}, env...)
	web := startProc(t, "serve", env...)
	url := waitFor(t, web.stdout, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	cfg, _ := loadConfig(func(k string) string {
		if k == rs.EnvName() {
			return rs.URL
		}
		return ""
	})
	return web, &service{url: url, rs: rs, b: newBilling(rs, cfg)}
}

func newBilling(rs *redistest.Server, cfg config) *billing.Service {
	bc := cfg.billingConfig(zerolog.Nop())
	if cfg.Store.S3 == nil {
		// The service's asset store, for a test to read what it saved.
		bc.Assets, _ = cfg.Store.Open(context.Background(), objstore.Assets)
	}
	return billing.New(rs.Client, bc)
}

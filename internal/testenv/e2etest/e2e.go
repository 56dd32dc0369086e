// Package e2etest runs carphoto end to end for the tests of
// cmd/carphoto/e2e/...: the real service (internal/service) in-process or
// as processes of the test binary, real HTTP, the real queue and worker,
// on the Redis at REDIS_URL when set (CI) and an embedded one otherwise.
package e2etest

import (
	"bufio"
	"bytes"
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
	"carphoto/internal/service"
	"carphoto/internal/testenv/apitest"
	"carphoto/internal/testenv/imgtest"
	"carphoto/internal/testenv/redistest"
	"carphoto/objstore"
)

// db is the calling package's database on a shared real Redis, as its
// TestMain gave it to Main.
var db int

// Main is an end-to-end package's TestMain: db is the package's own Redis
// database (each package its own, so that packages run in parallel on one
// real Redis; 1..15, unique across the repository), after runs once the
// tests are over (stopping a browser, say).
//
// The test binary doubles as the carphoto binary for the multi-process
// tests: with CARPHOTO_E2E_ROLE set it runs that subcommand and exits.
// Otherwise it runs the tests with every HTTP answer they get checked
// against the OpenAPI document (status, content type, headers, JSON body),
// and fails the run on any mismatch: the document cannot drift from the
// server.
func Main(m *testing.M, redisDB int, after ...func()) {
	if role := os.Getenv("CARPHOTO_E2E_ROLE"); role != "" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		err := service.Run(ctx, []string{role}, os.Getenv, os.Stdout, os.Stderr)
		stop()
		if err != nil {
			fmt.Fprintln(os.Stderr, "carphoto:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	db = redisDB
	os.Exit(checkAnswers(m, after))
}

// sideBySideAtOnce lets n of the side-by-side tests (t.Parallel) run at
// once, unless -parallel says otherwise: they wait, mostly idle, on
// Asynq's recovery of a killed worker's task, and go test's default
// (GOMAXPROCS, two on a two-core machine) would hold the others back
// behind those minutes of waiting.
func sideBySideAtOnce(n int) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		flag.Set("test.parallel", strconv.Itoa(n))
	}
}

// CheckAnswers runs the tests with every answer checked against
// openapi.json, then after.
func checkAnswers(m *testing.M, after []func()) int {
	c, err := apitest.Load()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tr := &apitest.Transport{Base: http.DefaultTransport, Checker: c}
	http.DefaultTransport = tr
	sideBySideAtOnce(4)
	code := m.Run()
	for _, f := range after {
		f()
	}
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

// Service is a running carphoto under test.
type Service struct {
	URL     string
	RS      *redistest.Server
	Billing *billing.Service
	out     *SyncBuffer
	Log     *SyncBuffer // the service's JSON log lines
}

// StartService runs `carphoto all` in-process on port 0 with env on top of
// the test defaults, and stops it when the test ends.
func StartService(t *testing.T, env map[string]string) *Service {
	t.Helper()
	return StartServiceOn(t, redistest.New(t, db), env)
}

// StartServiceOn is StartService on the Redis rs.
func StartServiceOn(t *testing.T, rs *redistest.Server, env map[string]string) *Service {
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
	cfg, err := service.LoadConfig(getenv)
	if err != nil {
		t.Fatal(err)
	}
	out, logs := &SyncBuffer{}, &SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- service.Run(ctx, []string{"all"}, getenv, out, logs) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("service stopped with error: %v", err)
		}
	})
	url := WaitFor(t, out, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	WaitReady(t, url)
	return &Service{URL: url, RS: rs, Billing: NewBilling(rs, cfg), out: out, Log: logs}
}

// Account creates an account with the given credits and returns its key.
func (s *Service) Account(t *testing.T, credits int64) (id, key string) {
	t.Helper()
	a, key, err := s.Billing.CreateAccount(context.Background(), "test", credits)
	if err != nil {
		t.Fatal(err)
	}
	return a.ID, key
}

func (s *Service) Credits(t *testing.T, id string) int64 {
	t.Helper()
	a, err := s.Billing.Account(context.Background(), id)
	if err != nil {
		t.Fatalf("read balance of %s: %v", id, err)
	}
	return a.Credits
}

// WaitReady polls /readyz until a worker is seen.
func WaitReady(t *testing.T, url string) {
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

// WaitFor waits until re matches what r has printed and returns group 1.
func WaitFor(t *testing.T, r interface{ String() string }, re *regexp.Regexp) string {
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

// SyncBuffer is a bytes.Buffer safe for a writer and a polling reader.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Part is one multipart field: a file when filename is set.
type Part struct {
	Name, Filename string
	Data           []byte
}

// File is a multipart file field name holding data (named name.bin).
func File(name string, data []byte) Part { return Part{name, name + ".bin", data} }

// Field is a multipart text field.
func Field(name, v string) Part { return Part{Name: name, Data: []byte(v)} }

// MultipartBody encodes parts as a multipart/form-data body.
func MultipartBody(t *testing.T, parts ...Part) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		var w io.Writer
		var err error
		if p.Filename != "" {
			w, err = mw.CreateFormFile(p.Name, p.Filename)
		} else {
			w, err = mw.CreateFormField(p.Name)
		}
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.Data)
	}
	mw.Close()
	return b.Bytes(), mw.FormDataContentType()
}

// Post sends a multipart POST and returns status, headers and body.
func Post(t *testing.T, url, key string, parts ...Part) (int, http.Header, []byte) {
	t.Helper()
	body, ct := MultipartBody(t, parts...)
	return Do(t, http.MethodPost, url, key, ct, bytes.NewReader(body))
}

// Do sends one request with key as its bearer token (none when empty) and
// returns status, headers and body.
func Do(t *testing.T, method, url, key, contentType string, body io.Reader) (int, http.Header, []byte) {
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

// WantError asserts a JSON {error, code} failure.
func WantError(t *testing.T, status int, h http.Header, body []byte, wantStatus int, wantCode string) {
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

// CarPhoto returns the sample car photo (docs/samples/car.jpg: 600×399,
// one plate), which every clone has.
func CarPhoto(t testing.TB) []byte { return imgtest.Sample(t, "car.jpg") }

// SyntheticJPEG is a w×h JPEG of a red car-like block with a plate-like
// striped patch: a photo of a known size without a real car.
func SyntheticJPEG(t testing.TB, w, h int) []byte {
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

// TwoColourLogo is a plate design: left half blue, right half yellow.
func TwoColourLogo(t testing.TB) []byte {
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

// HugePNGHeader is a valid PNG signature and IHDR claiming 40000×40000.
func HugePNGHeader() []byte {
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

// Proc is a carphoto subprocess (the test binary in a role).
type Proc struct {
	Cmd    *exec.Cmd
	Stdout *SyncBuffer
	Stderr *SyncBuffer
}

// StartProc starts the test binary as carphoto role (serve, worker, all)
// with env added, killed when the test ends.
func StartProc(t *testing.T, role string, env ...string) *Proc {
	t.Helper()
	return StartProcIn(t, "", role, env...)
}

// StartProcIn starts the process in dir (the test's own when empty).
func StartProcIn(t *testing.T, dir, role string, env ...string) *Proc {
	t.Helper()
	bin, err := filepath.Abs(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-test.run=^$")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), append([]string{"CARPHOTO_E2E_ROLE=" + role, "LOG_LEVEL=info"}, env...)...)
	p := &Proc{Cmd: cmd, Stdout: &SyncBuffer{}, Stderr: &SyncBuffer{}}
	cmd.Stdout, cmd.Stderr = p.Stdout, p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", role, Tail(p.Stderr.String(), 3000))
		}
	})
	return p
}

// Tail is the last n bytes of s.
func Tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// Lines returns a reader over a buffer's lines so far, for assertions.
func Lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

// StartWeb runs `carphoto serve` as a process of its own on rs, with env
// (REDIS_URL and PORT are set here), and returns it with a handle on its
// accounts and balances.
func StartWeb(t *testing.T, rs *redistest.Server, env ...string) (*Proc, *Service) {
	t.Helper()
	env = append([]string{rs.Env(), "PORT=0"}, env...)
	web := StartProc(t, "serve", env...)
	url := WaitFor(t, web.Stdout, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	cfg, _ := service.LoadConfig(func(k string) string {
		if k == rs.EnvName() {
			return rs.URL
		}
		return ""
	})
	return web, &Service{URL: url, RS: rs, Billing: NewBilling(rs, cfg)}
}

// NewBilling is a billing service on rs configured as the service is by
// cfg, for a test to create accounts and read balances.
func NewBilling(rs *redistest.Server, cfg service.Config) *billing.Service {
	bc := cfg.BillingConfig(zerolog.Nop())
	if cfg.Store.S3 == nil {
		// The service's asset store, for a test to read what it saved.
		bc.Assets, _ = cfg.Store.Open(context.Background(), objstore.Assets)
	}
	return billing.New(rs.Client, bc)
}

package main

// Browser tests: the pages at / and /docs in a real headless Chromium,
// driven with chromedp. They skip, saying why, where no browser is
// installed; .ci/run installs Debian's chromium.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// chromium is the one headless Chromium the browser tests share, started
// by the first of them and stopped by TestMain.
var chromium struct {
	once sync.Once
	ctx  context.Context // the browser's first tab; new tabs open beside it
	stop func()
	skip string // why there is no browser
	err  error
}

// browser returns a new tab of the shared headless Chromium, closed when
// the test ends, or skips the test when no Chromium is installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	chromium.once.Do(startChromium)
	if chromium.skip != "" {
		t.Skip(chromium.skip)
	}
	if chromium.err != nil {
		t.Fatal(chromium.err)
	}
	ctx, cancelTab := chromedp.NewContext(chromium.ctx)
	ctx, cancelTime := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(func() {
		cancelTime()
		cancelTab()
	})
	return ctx
}

func startChromium() {
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		chromium.skip = "no Chromium found (chromium, chromium-browser, google-chrome): `apt-get install chromium` to run the browser tests"
		return
	}
	dir, err := os.MkdirTemp("", "carphoto-chromium-")
	if err != nil {
		chromium.err = err
		return
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path), chromedp.UserDataDir(dir),
		// Tests run as root in CI, where Chromium's sandbox cannot start.
		chromedp.NoSandbox, chromedp.DisableGPU)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	chromium.ctx = ctx
	chromium.stop = func() {
		cancelBrowser()
		cancelAlloc()
		// Chromium's children may write for a moment after it stops.
		for range 50 {
			if os.RemoveAll(dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[int](`1`)); err != nil {
		chromium.err = fmt.Errorf("start %s: %w", path, err)
	}
}

// stopChromium stops the shared browser, if a test started it.
func stopChromium() {
	if chromium.stop != nil {
		chromium.stop()
	}
}

// requestLog records the URL of every request the tab makes, and which
// of them the page's Content-Security-Policy stopped before they left.
type requestLog struct {
	mu      sync.Mutex
	urls    map[network.RequestID]string
	blocked map[network.RequestID]bool
}

func watchRequests(t *testing.T, ctx context.Context) *requestLog {
	t.Helper()
	l := &requestLog{urls: map[network.RequestID]string{}, blocked: map[network.RequestID]bool{}}
	err := chromedp.Listen(ctx, func(ev any) {
		l.mu.Lock()
		defer l.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			l.urls[ev.RequestID] = ev.Request.URL
		case *network.EventLoadingFailed:
			if ev.BlockedReason == network.BlockedReasonCsp {
				l.blocked[ev.RequestID] = true
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// elsewhere returns the requests that went anywhere but base.
func (l *requestLog) elsewhere(base string) (out []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for id, u := range l.urls {
		local := strings.HasPrefix(u, base+"/") || strings.HasPrefix(u, "blob:") || strings.HasPrefix(u, "data:")
		if !local && !l.blocked[id] {
			out = append(out, u)
		}
	}
	return out
}

// photoFile returns the path of a car photo on disk: the shared data set's
// when present, else a synthetic one written for the test.
func photoFile(t *testing.T) (path string, real bool) {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "datasets", "plates-web-cc0", "images", "plates-web-cc0-0005.jpg"))
	if err == nil {
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	p = filepath.Join(t.TempDir(), "car.jpg")
	if err := os.WriteFile(p, syntheticJPEG(t, 640, 480), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, false
}

// TestTryItPageBlursPlates does what a new integrator does on /: paste the
// key, choose a photo, press Process, and sees the result beside the
// original with the plates found and the credits; a wrong key first shows
// the API's error.
func TestTryItPageBlursPlates(t *testing.T) {
	ctx := browser(t)
	s := startService(t, nil)
	id, key := s.account(t, 5)
	photo, real := photoFile(t)
	requests := watchRequests(t, ctx)

	// A mistyped key first: the API's code and message are shown.
	err := chromedp.Do(ctx,
		chromedp.Navigate(s.url+"/"),
		chromedp.WaitVisible(chromedp.ID("run")),
		chromedp.SetValue(chromedp.ID("key"), key+"x"),
		chromedp.SetUploadFiles(chromedp.ID("photo"), []string{photo}),
		chromedp.Click(chromedp.ID("run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	msg, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const s = document.getElementById("status");
		return s.className === "error" ? s.textContent : "";
	})()`, chromedp.WithPollingTimeout(30*time.Second)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(msg, "401 invalid_api_key: ") {
		t.Errorf("status %q, want 401 invalid_api_key: <message>", msg)
	}

	err = chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("key"), key),
		chromedp.Click(chromedp.ID("run")),
	)
	if err != nil {
		t.Fatal(err)
	}
	outcome, err := chromedp.Run(ctx, chromedp.Poll[string](`(() => {
		const r = document.getElementById("result"), s = document.getElementById("status");
		if (r.complete && r.naturalWidth > 0) return "ok";
		return s.className === "error" ? "error: " + s.textContent : "";
	})()`, chromedp.WithPollingTimeout(60*time.Second)))
	if err != nil {
		t.Fatalf("no result image: %v", err)
	}
	if outcome != "ok" {
		t.Fatalf("the page shows %q", outcome)
	}
	var page struct {
		Plates, Charged, Remaining, RequestID, Download, Href string
		ResultW, ResultH, OriginalW, OriginalH                int
	}
	page, err = chromedp.Run(ctx, chromedp.Evaluate[struct {
		Plates, Charged, Remaining, RequestID, Download, Href string
		ResultW, ResultH, OriginalW, OriginalH                int
	}](`(() => {
		const $ = (id) => document.getElementById(id);
		return {Plates: $("plates").textContent, Charged: $("charged").textContent,
			Remaining: $("remaining").textContent, RequestID: $("requestId").textContent,
			Download: $("download").download, Href: $("download").href,
			ResultW: $("result").naturalWidth, ResultH: $("result").naturalHeight,
			OriginalW: $("original").naturalWidth, OriginalH: $("original").naturalHeight};
	})()`))
	if err != nil {
		t.Fatal(err)
	}
	if page.ResultW != page.OriginalW || page.ResultH != page.OriginalH || page.OriginalW == 0 {
		t.Errorf("result %dx%d beside original %dx%d, want the same size", page.ResultW, page.ResultH, page.OriginalW, page.OriginalH)
	}
	if page.Charged != "1" || page.Remaining != "4" {
		t.Errorf("page shows charged %q, remaining %q; want 1 and 4", page.Charged, page.Remaining)
	}
	if got := s.credits(t, id); got != 4 {
		t.Errorf("balance %d, want 4", got)
	}
	n, err := strconv.Atoi(page.Plates)
	if err != nil || n < 0 || (real && n < 1) {
		t.Errorf("plates found %q, want a count (at least 1 on the real photo)", page.Plates)
	}
	if !strings.HasPrefix(page.Href, "blob:") || !strings.HasSuffix(page.Download, "-blur-plates.jpg") {
		t.Errorf("download link %q named %q, want a blob: URL named …-blur-plates.jpg", page.Href, page.Download)
	}
	if len(page.RequestID) != 26 {
		t.Errorf("request id %q, want the X-Request-Id", page.RequestID)
	}
	if out := requests.elsewhere(s.url); len(out) > 0 {
		t.Errorf("the page fetched from elsewhere: %v", out)
	}
	if dir := os.Getenv("CARPHOTO_SCREENSHOTS"); dir != "" {
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "try-it.png"), shot, 0o644)
		}
		if err != nil {
			t.Error(err)
		}
	}
}

// TestDocsPage renders /docs with the vendored Redoc, opens the blur-plates
// operation and finds its headers, with no request leaving the server.
func TestDocsPage(t *testing.T) {
	ctx := browser(t)
	s := startService(t, nil)
	requests := watchRequests(t, ctx)
	see := func(what string, texts ...string) {
		t.Helper()
		q, _ := json.Marshal(texts)
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](string(q)+`.every((s) => document.body.innerText.includes(s))`,
			chromedp.WithPollingTimeout(60*time.Second)))
		if err != nil {
			text, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText.slice(0, 1000)`))
			t.Fatalf("%s: never saw %q: %v; page text: %q", what, texts, err, text)
		}
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(s.url+"/docs#/operations")); err != nil {
		t.Fatal(err)
	}
	see("the Operations section", "Hide licence plates", "Replace the plate with a design", "Add a ground shadow under the car", "/v1/blur-plates")
	err := chromedp.Do(ctx, chromedp.Evaluate[chromedp.Void](
		`[...document.querySelectorAll("a")].find((a) => a.textContent.startsWith("Hide licence plates")).click()`))
	if err != nil {
		t.Fatal(err)
	}
	see("the blur-plates operation", "X-Credits-Remaining", "X-Plates-Found", "Idempotency-Key")
	if out := requests.elsewhere(s.url); len(out) > 0 {
		t.Errorf("the page fetched from elsewhere: %v", out)
	}
}

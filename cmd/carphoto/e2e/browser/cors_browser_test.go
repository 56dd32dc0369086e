package browser

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"

	"github.com/chromedp/chromedp"
)

// corsPage is a dealer's page on its own origin: it reads the public
// OpenAPI document, then sends the sample photo to blur-plates with a key
// and reads what the answer's headers say. window.result is its JSON
// report once done.
const corsPage = `<!doctype html><meta charset="utf-8"><title>dealer</title><script>
window.result = "";
(async () => {
  const out = {};
  try {
    const doc = await (await fetch(%[1]q + "/v1/openapi.json")).json();
    out.openapi = doc.openapi;
  } catch (e) { out.openapiError = String(e); }
  try {
    const photo = await (await fetch("/car.jpg")).blob();
    const body = new FormData();
    body.append("image", photo, "car.jpg");
    const res = await fetch(%[1]q + "/v1/blur-plates", {method: "POST", headers: {Authorization: "Bearer " + %[2]q}, body});
    out.status = res.status;
    out.bytes = (await res.arrayBuffer()).byteLength;
    for (const h of ["X-Credits-Charged", "X-Credits-Remaining", "X-Plates-Found", "X-Request-Id", "X-RateLimit-Remaining"]) out[h] = res.headers.get(h);
  } catch (e) { out.callError = String(e); }
  window.result = JSON.stringify(out);
})();
</script>`

// A page on another origin in Chromium: it reads /v1/openapi.json from
// any origin; with its origin in CORS_ORIGINS it calls blur-plates with a
// key and reads the credit headers; a page on an origin not listed reads
// the document but its call is refused by the browser.
func TestCORSInBrowser(t *testing.T) {
	ctx := browser(t)
	photo := e2etest.CarPhoto(t)
	// The pages' origins must be known before the service starts (its
	// CORS_ORIGINS), the service's address and key before a page is read.
	var page atomic.Value
	pageServer := func() *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/car.jpg" {
				w.Header().Set("Content-Type", "image/jpeg")
				w.Write(photo)
				return
			}
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			io.WriteString(w, page.Load().(string))
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	dealer, stranger := pageServer(), pageServer()
	s := e2etest.StartService(t, map[string]string{"CORS_ORIGINS": dealer.URL})
	id, key := s.Account(t, 5)
	page.Store(fmt.Sprintf(corsPage, s.URL, key))

	type report struct {
		OpenAPI      string `json:"openapi"`
		OpenAPIError string `json:"openapiError"`
		Status       int    `json:"status"`
		Bytes        int    `json:"bytes"`
		CallError    string `json:"callError"`
		Charged      string `json:"X-Credits-Charged"`
		Remaining    string `json:"X-Credits-Remaining"`
		Plates       string `json:"X-Plates-Found"`
		RequestID    string `json:"X-Request-Id"`
		RateLeft     string `json:"X-RateLimit-Remaining"`
	}
	visit := func(url string) report {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		got, err := chromedp.Run(ctx, chromedp.Poll[string](`window.result`, chromedp.WithPollingTimeout(60*time.Second)))
		if err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		var r report
		if err := json.Unmarshal([]byte(got), &r); err != nil {
			t.Fatalf("%s reported %q: %v", url, got, err)
		}
		return r
	}

	r := visit(dealer.URL + "/")
	t.Logf("the dealer's page (%s): %+v", dealer.URL, r)
	if r.OpenAPI != "3.1.0" {
		t.Errorf("the dealer's page read openapi %q (%s), want 3.1.0", r.OpenAPI, r.OpenAPIError)
	}
	if r.Status != 200 || r.Bytes == 0 || r.Charged != "1" || r.Remaining != "4" || r.Plates == "" || r.RequestID == "" || r.RateLeft == "" {
		t.Errorf("the dealer's page's call: %+v; want 200 with an image, X-Credits-Charged 1, X-Credits-Remaining 4 and the other headers readable", r)
	}
	if got := s.Credits(t, id); got != 4 {
		t.Errorf("balance %d after the page's call, want 4", got)
	}

	r = visit(stranger.URL + "/")
	t.Logf("a stranger's page (%s): %+v", stranger.URL, r)
	if r.OpenAPI != "3.1.0" {
		t.Errorf("a page on an origin not in CORS_ORIGINS read openapi %q (%s), want 3.1.0: the document is public", r.OpenAPI, r.OpenAPIError)
	}
	if r.CallError == "" || r.Status != 0 {
		t.Errorf("a page on an origin not in CORS_ORIGINS read its call's answer (%+v): the browser must refuse it", r)
	}
	if got := s.Credits(t, id); got != 4 {
		t.Errorf("balance %d after the refused page, want 4: its preflight failed, so its call never left the browser", got)
	}
}

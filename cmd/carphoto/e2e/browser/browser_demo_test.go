package browser

import (
	"context"
	"io"
	"net"
	"net/url"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"carphoto/internal/service"
	"carphoto/internal/testenv/e2etest"
)

// TestTryItPageDemoKey opens / in Chromium as a newcomer would after
// `go run ./cmd/carphoto`: on this machine the key field holds the demo
// key the banner printed, ready to press Process. The zero-setup mode
// listens on loopback only (127.0.0.1 and ::1), so a neighbour on the LAN
// cannot even connect; opened to the network with HOST=0.0.0.0 (as in a
// container), the page a neighbour gets comes without the key; and a
// Service on a real Redis never fills it in.
func TestTryItPageDemoKey(t *testing.T) {
	ctx := browser(t)
	keyField := func(page string) string {
		t.Helper()
		err := chromedp.Do(ctx, chromedp.Navigate(page), chromedp.WaitVisible(chromedp.ID("run")))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		key, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById("key").value`))
		if err != nil {
			t.Fatalf("%s: %v", page, err)
		}
		return key
	}

	// zeroSetup runs `carphoto` with no Redis, HOST host, and returns the
	// demo key it printed and its port.
	zeroSetup := func(host string) (demoKey, port string) {
		t.Helper()
		out := &e2etest.SyncBuffer{}
		rctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		getenv := func(k string) string {
			switch k {
			case "PORT":
				return "0"
			case "HOST":
				return host
			}
			return ""
		}
		go func() { done <- service.Run(rctx, nil, getenv, out, io.Discard) }()
		t.Cleanup(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		})
		demoKey = e2etest.WaitFor(t, out, regexp.MustCompile(`Authorization: Bearer (\S+)"`))
		u, err := url.Parse(e2etest.WaitFor(t, out, regexp.MustCompile(`carphoto listening on (http://\S+)`)))
		if err != nil {
			t.Fatal(err)
		}
		return demoKey, u.Port()
	}

	demoKey, port := zeroSetup("")
	hosts := []string{"localhost", "127.0.0.1"}
	if ln, err := net.Listen("tcp", "[::1]:0"); err == nil {
		ln.Close()
		hosts = append(hosts, "[::1]")
	}
	for _, host := range hosts {
		if got := keyField("http://" + host + ":" + port + "/"); got != demoKey {
			t.Errorf("zero-setup mode, page opened at %s: key field %q, want the demo key %q", host, got, demoKey)
		}
	}
	ip := otherAddress()
	if ip == "" {
		t.Log("this host has no address but loopback: the neighbour's view is checked by server's TestTryPageDemoKey only")
	} else {
		if c, err := net.DialTimeout("tcp", net.JoinHostPort(ip, port), 5*time.Second); err == nil {
			c.Close()
			t.Errorf("zero-setup mode: a neighbour connects at %s, want it to listen on loopback only", net.JoinHostPort(ip, port))
		}
		_, open := zeroSetup("0.0.0.0")
		if got := keyField("http://" + net.JoinHostPort(ip, open) + "/"); got != "" {
			t.Errorf("zero-setup mode with HOST=0.0.0.0, page opened at this host's address %s (as a neighbour would): key field %q, want empty", ip, got)
		}
	}

	s := e2etest.StartService(t, nil)
	if got := keyField(s.URL + "/"); got != "" {
		t.Errorf("a service on a real Redis, page opened on loopback: key field %q, want empty", got)
	}
}

// otherAddress is an address of this host that is not loopback (IPv4 where
// there is one), or "" when it has none.
func otherAddress() string {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	other := ""
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
			continue
		}
		if n.IP.To4() != nil {
			return n.IP.String()
		}
		other = n.IP.String()
	}
	return other
}

package main

import (
	"context"
	"io"
	"net"
	"net/url"
	"regexp"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestTryItPageDemoKey opens / in Chromium as a newcomer would after
// `go run ./cmd/carphoto`: on this machine the key field holds the demo
// key the banner printed, ready to press Process. The zero-setup mode
// listens on every interface, so the same page opened at one of this
// host's other addresses (a neighbour on the LAN) comes without it, and a
// service on a real Redis never fills it in.
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

	out := &syncBuffer{}
	rctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	getenv := func(k string) string {
		if k == "PORT" {
			return "0"
		}
		return ""
	}
	go func() { done <- run(rctx, nil, getenv, out, io.Discard) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	demoKey := waitFor(t, out, regexp.MustCompile(`Authorization: Bearer (\S+)"`))
	base := waitFor(t, out, regexp.MustCompile(`carphoto listening on (http://\S+)`))
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, host := range []string{"localhost", "127.0.0.1"} {
		if got := keyField("http://" + net.JoinHostPort(host, u.Port()) + "/"); got != demoKey {
			t.Errorf("zero-setup mode, page opened at %s: key field %q, want the demo key %q", host, got, demoKey)
		}
	}
	if ip := otherAddress(); ip == "" {
		t.Log("this host has no address but loopback: the neighbour's view is checked by server's TestTryPageDemoKey only")
	} else if got := keyField("http://" + net.JoinHostPort(ip, u.Port()) + "/"); got != "" {
		t.Errorf("zero-setup mode, page opened at this host's address %s (as a neighbour would): key field %q, want empty", ip, got)
	}

	s := startService(t, nil)
	if got := keyField(s.url + "/"); got != "" {
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

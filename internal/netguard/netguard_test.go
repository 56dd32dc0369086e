package netguard_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"
	"time"

	"carphoto/internal/netguard"
)

func TestPublic(t *testing.T) {
	for _, tc := range []struct {
		ip   string
		want bool
	}{
		// public
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"2a00:1450:4001:80b::200e", true},
		{"64:ff9b::808:808", true}, // NAT64 of 8.8.8.8
		{"2002:808:808::1", true},  // 6to4 of 8.8.8.8
		{"::ffff:8.8.8.8", true},   // IPv4-mapped 8.8.8.8
		{"100.63.255.255", true},   // just below CGNAT
		{"100.128.0.0", true},      // just above CGNAT
		{"172.32.0.1", true},       // just above 172.16/12
		// IPv4 internal and reserved
		{"127.0.0.1", false},
		{"127.255.255.254", false},
		{"0.0.0.0", false},
		{"0.1.2.3", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"172.31.255.255", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"100.64.0.1", false},      // CGNAT
		{"100.127.255.255", false},
		{"192.0.0.8", false},
		{"192.0.2.1", false},
		{"198.18.0.1", false},
		{"198.51.100.7", false},
		{"203.0.113.9", false},
		{"224.0.0.1", false},
		{"239.255.255.250", false},
		{"240.0.0.1", false},
		{"255.255.255.255", false},
		// IPv6 internal and reserved
		{"::", false},
		{"::1", false},
		{"fe80::1", false},
		{"fe80::1%eth0", false},
		{"fec0::1", false},
		{"fc00::1", false},
		{"fd12:3456::1", false},
		{"ff02::1", false},
		{"ff05::2", false},
		{"2001:db8::1", false},
		{"100::1", false},
		// IPv4 inside IPv6
		{"::ffff:127.0.0.1", false},                     // mapped
		{"::ffff:10.0.0.1", false},                      // mapped
		{"::ffff:169.254.169.254", false},               // mapped metadata
		{"::127.0.0.1", false},                          // IPv4-compatible
		{"::8.8.8.8", false},                            // IPv4-compatible: deprecated, never a destination
		{"64:ff9b::7f00:1", false},                      // NAT64 of 127.0.0.1
		{"64:ff9b::a9fe:a9fe", false},                   // NAT64 of 169.254.169.254
		{"64:ff9b::c0a8:101", false},                    // NAT64 of 192.168.1.1
		{"64:ff9b:1::808:808", false},                   // local-use NAT64
		{"2002:7f00:1::", false},                        // 6to4 of 127.0.0.1
		{"2002:a00:1::1", false},                        // 6to4 of 10.0.0.1
		{"2002:a9fe:a9fe::", false},                     // 6to4 of 169.254.169.254
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false}, // Teredo
		{"2001::1", false},                              // Teredo
		// issue 55: outside 2000::/3, IPv6 is refused whatever it holds
		{"::ffff:0:7f00:1", false}, // IPv4-translated (RFC 2765) 127.0.0.1
		{"::ffff:0:808:808", false},
		{"1::1", false},      // 0000::/8 outside ::/96
		{"::1.2.3.4", false}, // IPv4-compatible
		{"100::1", false},
		{"2001:db8::1", false},
		{"2001:2::1", false}, // benchmarking
		{"3fff::1", false},   // documentation
		{"4000::1", false},   // unassigned
		{"5f00::1", false},   // segment routing
		{"64:ff9b::8.8.8.8", true},
		{"2001:4860:4860::8888", true},
		{"2c0f:fb50:4003::1", true},
	} {
		t.Run(tc.ip, func(t *testing.T) {
			if got := netguard.Public(netip.MustParseAddr(tc.ip)); got != tc.want {
				t.Errorf("Public(%s) = %v, want %v", tc.ip, got, tc.want)
			}
		})
	}
	if netguard.Public(netip.Addr{}) {
		t.Error("the zero Addr is public, want not")
	}
}

func TestControl(t *testing.T) {
	g := netguard.Guard{}
	for _, tc := range []struct {
		address string
		ok      bool
	}{
		{"8.8.8.8:443", true},
		{"[2606:4700:4700::1111]:443", true},
		{"[64:ff9b::8.8.8.8]:443", true},
		{"127.0.0.1:80", false},
		{"[::ffff:0:7f00:1]:80", false},
		{"[1::1]:80", false},
		{"[::1]:80", false},
		{"[64:ff9b::7f00:1]:80", false},
		{"[2002:7f00:1::]:80", false},
		{"[::127.0.0.1]:80", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"[fe80::1%eth0]:80", false},
		{"localhost:80", false}, // not an address: refused, not resolved
		{"garbage", false},
	} {
		err := g.Control("tcp", tc.address, nil)
		if (err == nil) != tc.ok {
			t.Errorf("Control(%s) = %v, want allowed %v", tc.address, err, tc.ok)
		}
		if err != nil && !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("Control(%s) = %v, want ErrBlocked", tc.address, err)
		}
	}
	if err := (netguard.Guard{AllowPrivate: true}).Control("tcp", "127.0.0.1:80", nil); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
	// Except lets exactly its addresses through: not the same host on
	// another port.
	except := netguard.Guard{Except: []string{"127.0.0.1:8080"}}
	if err := except.Control("tcp", "127.0.0.1:8080", nil); err != nil {
		t.Errorf("Except: %v", err)
	}
	if err := except.Control("tcp", "127.0.0.1:8081", nil); !errors.Is(err, netguard.ErrBlocked) {
		t.Errorf("Except, another port: %v, want ErrBlocked", err)
	}
}

// A client on the guard's Transport cannot reach a server on loopback, by
// address, by name, or through an IPv6 form of its address.
func TestTransportRefusesLoopback(t *testing.T) {
	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hit = true }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	client := &http.Client{Transport: netguard.Guard{}.Transport(time.Second), Timeout: 5 * time.Second}
	for _, u := range []string{
		srv.URL,
		"http://localhost:" + port + "/",
		"http://[::ffff:127.0.0.1]:" + port + "/",
		"http://[64:ff9b::7f00:1]:" + port + "/",
		"http://[::127.0.0.1]:" + port + "/",
		"http://[2002:7f00:1::]:" + port + "/",
	} {
		res, err := client.Get(u)
		if err == nil {
			res.Body.Close()
			t.Errorf("GET %s went through, want refused", u)
			continue
		}
		if !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("GET %s: %v, want ErrBlocked", u, err)
		}
	}
	if hit {
		t.Error("the loopback server was reached")
	}
	open := &http.Client{Transport: netguard.Guard{AllowPrivate: true}.Transport(time.Second)}
	res, err := open.Get(srv.URL)
	if err != nil {
		t.Fatalf("AllowPrivate: %v", err)
	}
	res.Body.Close()
}

func TestCheckHost(t *testing.T) {
	ctx := context.Background()
	for _, host := range []string{"localhost", "127.0.0.1", "::1", "64:ff9b::7f00:1", "2002:7f00:1::", "::127.0.0.1", "169.254.169.254"} {
		if err := (netguard.Guard{}).CheckHost(ctx, host); !errors.Is(err, netguard.ErrBlocked) {
			t.Errorf("CheckHost(%s) = %v, want ErrBlocked", host, err)
		}
	}
	if err := (netguard.Guard{}).CheckHost(ctx, "8.8.8.8"); err != nil {
		t.Errorf("CheckHost(8.8.8.8) = %v, want nil", err)
	}
	if err := (netguard.Guard{}).CheckHost(ctx, "no-such-host.invalid"); err == nil || errors.Is(err, netguard.ErrBlocked) {
		t.Errorf("CheckHost(no-such-host.invalid) = %v, want a resolution error", err)
	}
}

// Package netguard keeps the service's outbound calls (webhooks, and
// photos, designs and backdrops fetched by URL) on the public internet. It is an allow-list: IPv4 public
// unicast (no loopback, private, link-local, carrier-grade NAT, multicast,
// reserved or documentation address); IPv6 only inside global unicast
// (2000::/3) minus its reserved and documentation ranges, plus the
// well-known NAT64 prefix 64:ff9b::/96 with a public IPv4 inside (how
// IPv6-only hosts reach IPv4 ones). Every IPv6 form that carries an IPv4
// address (IPv4-mapped, NAT64, 6to4, Teredo) is checked by that address
// too; any other IPv6 outside 2000::/3 (IPv4-compatible, IPv4-translated,
// the rest of 0000::/8, unique local, link-local, multicast) is refused.
//
// The check that counts runs when a connection is dialled (Control), on the
// address actually dialled: a name that resolves to a public address when
// a URL is accepted and to an internal one later (DNS rebinding), or a
// redirect to an internal address, is refused there.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"syscall"
	"time"
)

// ErrBlocked is the cause of every refusal: the address is not public.
var ErrBlocked = errors.New("netguard: not a public address")

// blocked4 are the IPv4 ranges that are not public unicast (RFC 6890's
// special-purpose registry).
var blocked4 = prefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // carrier-grade NAT
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local (cloud metadata)
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // 6to4 relay anycast
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and the broadcast address
)

// global6 is IPv6 global unicast, the only IPv6 allowed (beside NAT64);
// blocked6 its reserved and documentation parts.
var (
	global6  = netip.MustParsePrefix("2000::/3")
	blocked6 = prefixes(
		"2001::/23",     // IETF protocol assignments, Teredo (2001::/32) and benchmarking among them
		"2001:db8::/32", // documentation
		"3fff::/20",     // documentation
	)
)

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

// Forms of IPv6 address that carry an IPv4 address.
var (
	compat = netip.MustParsePrefix("::/96")         // IPv4-compatible (deprecated)
	mapped = netip.MustParsePrefix("::ffff:0:0/96") // IPv4-mapped
	nat64  = netip.MustParsePrefix("64:ff9b::/96")  // well-known NAT64 prefix
	sixTo4 = netip.MustParsePrefix("2002::/16")     // 6to4: the IPv4 in bits 16-47
	teredo = netip.MustParsePrefix("2001::/32")     // Teredo: server in bits 32-63, client inverted in the last 32
)

// embedded returns the IPv4 addresses an IPv6 address carries: the one it
// is mapped to or translated to, or the ends of its tunnel.
func embedded(ip netip.Addr) []netip.Addr {
	if !ip.Is6() {
		return nil
	}
	b := ip.As16()
	v4 := func(i int) netip.Addr { return netip.AddrFrom4([4]byte(b[i : i+4])) }
	switch {
	case mapped.Contains(ip), compat.Contains(ip), nat64.Contains(ip):
		return []netip.Addr{v4(12)}
	case sixTo4.Contains(ip):
		return []netip.Addr{v4(2)}
	case teredo.Contains(ip):
		client := [4]byte{^b[12], ^b[13], ^b[14], ^b[15]}
		return []netip.Addr{v4(4), netip.AddrFrom4(client)}
	}
	return nil
}

// Public reports whether ip may be called: an IPv4 public unicast
// address, or an IPv6 one of the allow-list (see the package), with every
// IPv4 address it carries public too.
func Public(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	ip = ip.WithZone("").Unmap() // an IPv4-mapped address is its IPv4 address
	if ip.Is4() {
		return public4(ip)
	}
	if !nat64.Contains(ip) {
		if !global6.Contains(ip) || inAny(blocked6, ip) {
			return false
		}
	}
	for _, a := range embedded(ip) {
		if !public4(a) {
			return false
		}
	}
	return true
}

func public4(ip netip.Addr) bool { return ip.Is4() && !inAny(blocked4, ip) }

func inAny(ps []netip.Prefix, ip netip.Addr) bool {
	for _, p := range ps {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Guard applies the check; AllowPrivate turns it off (development, and
// tests that call a server on loopback).
type Guard struct {
	AllowPrivate bool
	// Except lets these exact host:port addresses through although they
	// are not public: a test's first hop on loopback, so that what the
	// guard does to the next hop (a redirect) can be seen.
	Except []string
}

// CheckHost resolves host and refuses it unless every address it resolves
// to is public: the early answer to a client that names an internal host.
// Control decides again when connecting.
func (g Guard) CheckHost(ctx context.Context, host string) error {
	if g.AllowPrivate {
		return nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil || len(ips) == 0 {
		return fmt.Errorf("the host %q does not resolve", host)
	}
	for _, ip := range ips {
		if !Public(ip) {
			return fmt.Errorf("%w: %q is a loopback, private, link-local or reserved address", ErrBlocked, host)
		}
	}
	return nil
}

// Control is a net.Dialer Control function: it refuses to connect to an
// address that is not public. It sees every address dialled, after DNS and
// on every redirect.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	if g.AllowPrivate || slices.Contains(g.Except, address) {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !Public(ap.Addr()) {
		return fmt.Errorf("%w: refusing to connect to %s", ErrBlocked, address)
	}
	return nil
}

// Dialer is a net.Dialer with the guard's Control.
func (g Guard) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: g.Control}
}

// Transport is an http.Transport that dials only public addresses and uses
// no proxy (a proxy would dial on our behalf, past Control).
func (g Guard) Transport(dialTimeout time.Duration) *http.Transport {
	return &http.Transport{
		DialContext:           g.Dialer(dialTimeout).DialContext,
		Proxy:                 nil,
		TLSHandshakeTimeout:   dialTimeout,
		ResponseHeaderTimeout: 30 * time.Second,
		MaxIdleConnsPerHost:   2,
		IdleConnTimeout:       30 * time.Second,
	}
}

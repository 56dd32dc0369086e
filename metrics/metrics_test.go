package metrics

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
)

// TestRedisHookCountsFailures: a Redis that cannot be reached is counted;
// a missing key is not a failure.
func TestRedisHookCountsFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	m := New()
	rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: time.Second})
	defer rdb.Close()
	rdb.AddHook(m.RedisHook())
	if err := rdb.Get(context.Background(), "k").Err(); err == nil {
		t.Fatal("GET on a closed port succeeded")
	}
	if got := testutil.ToFloat64(m.redisErrors.WithLabelValues("get")); got != 1 {
		t.Errorf("errors counted for get: %v, want 1", got)
	}

	var h redisHook = redisHook{m}
	h.count(context.Background(), "blpop", redis.Nil)
	if got := testutil.ToFloat64(m.redisErrors.WithLabelValues("blpop")); got != 0 {
		t.Errorf("an empty BLPOP counted as an error: %v", got)
	}
}

func TestNilMetricsRecordNothing(t *testing.T) {
	var m *Metrics
	m.RequestDone(Request{Op: "blur-plates", Status: 200})
	m.PhotoStarted()()
	m.TaskDone("blur-plates", "ok", time.Second)
}

// Without a token only loopback clients may read the metrics; with one,
// only a request bearing it, from anywhere.
func TestAuthorized(t *testing.T) {
	for _, tc := range []struct {
		remote, token, header string
		want                  bool
	}{
		{"127.0.0.1:5000", "", "", true},
		{"[::1]:5000", "", "", true},
		{"[::ffff:127.0.0.1]:5000", "", "", true},
		{"10.0.0.7:5000", "", "", false},
		{"203.0.113.9:5000", "", "Bearer anything", false},
		{"[2001:db8::1]:5000", "", "", false},
		{"garbage", "", "", false},
		{"203.0.113.9:5000", "metrics-token-0123", "Bearer metrics-token-0123", true},
		{"127.0.0.1:5000", "metrics-token-0123", "", false},
		{"127.0.0.1:5000", "metrics-token-0123", "Bearer wrong-token-000000", false},
	} {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		r.RemoteAddr = tc.remote
		if tc.header != "" {
			r.Header.Set("Authorization", tc.header)
		}
		if got := Authorized(r, tc.token); got != tc.want {
			t.Errorf("from %s, token %q, header %q: %v, want %v", tc.remote, tc.token, tc.header, got, tc.want)
		}
	}
}

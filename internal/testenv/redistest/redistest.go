// Package redistest gives tests one Redis: the real server at REDIS_URL when
// it is set (CI), an embedded miniredis otherwise. Each test package asks for
// its own database number so packages running in parallel against one real
// server never see each other's keys.
//
// With REDIS_CLUSTER_URL set, or REDIS_CLUSTER_TEST=1 (a cluster of
// redis-server processes is started for the test process), New gives the
// cluster instead: it has only database 0, so packages on one cluster must
// run one at a time (go test -p 1); each New empties it.
package redistest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Server is a Redis a test can use: URL for code that dials by itself
// (asynq, the binary), Client for direct use.
type Server struct {
	URL    string
	Client redis.UniversalClient
	// Cluster is the Redis Cluster when tests run on one (ClusterWanted):
	// URL is then its REDIS_CLUSTER_URL.
	Cluster *Cluster
	// Mini is the embedded server when no REDIS_URL is set, nil otherwise.
	Mini *miniredis.Miniredis
}

// EnvName is the variable that points carphoto at s: REDIS_URL, or
// REDIS_CLUSTER_URL on a cluster.
func (s *Server) EnvName() string {
	if s.Cluster != nil {
		return "REDIS_CLUSTER_URL"
	}
	return "REDIS_URL"
}

// Env is s as an environment entry: EnvName()=URL.
func (s *Server) Env() string { return s.EnvName() + "=" + s.URL }

// New returns a flushed Redis database for the calling test. db must be
// unique per test package (1..15); with the embedded server it is ignored,
// and for a test that leased a database of its own (Own) that one is given.
func New(tb testing.TB, db int) *Server {
	tb.Helper()
	if db < 1 || db >= firstOwnDB {
		tb.Fatalf("redistest: db %d out of range 1..15", db)
	}
	var s Server
	if ClusterWanted() {
		c := sharedCluster(tb)
		s.URL, s.Client, s.Cluster = c.URL, c.Client, c
		if err := c.Flush(context.Background()); err != nil {
			tb.Fatalf("redistest: flush the cluster: %v", err)
		}
		return &s
	}
	if base, opt, ok := realRedis(tb); ok {
		if own, ok := ownDB(tb); ok {
			db = own
		}
		opt.DB = db
		s.URL = withDB(base, db)
		s.Client = redis.NewClient(opt)
	} else {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // TTLs follow the wall clock, as on a real server
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			tb.Fatalf("redistest: start miniredis: %v", err)
		}
		tb.Cleanup(m.Close)
		s.Mini = m
		s.URL = "redis://" + m.Addr()
		s.Client = redis.NewClient(&redis.Options{Addr: m.Addr()})
	}
	tb.Cleanup(func() { s.Client.Close() })
	ctx := context.Background()
	if err := s.Client.Ping(ctx).Err(); err != nil {
		tb.Fatalf("redistest: ping %s: %v", s.URL, err)
	}
	if err := s.Client.FlushDB(ctx).Err(); err != nil {
		tb.Fatalf("redistest: flush: %v", err)
	}
	return &s
}

// withDB returns url with its database path replaced by db.
func withDB(url string, db int) string {
	opt, _ := redis.ParseURL(url)
	scheme := "redis"
	if opt.TLSConfig != nil {
		scheme = "rediss"
	}
	auth := ""
	if opt.Password != "" {
		auth = opt.Username + ":" + opt.Password + "@"
	}
	return fmt.Sprintf("%s://%s%s/%d", scheme, auth, opt.Addr, db)
}

// Keys returns every key matching pattern: on a cluster, from every master
// (a plain KEYS would ask one node).
func (s *Server) Keys(tb testing.TB, pattern string) []string {
	tb.Helper()
	ctx := context.Background()
	cc, ok := s.Client.(*redis.ClusterClient)
	if !ok {
		keys, err := s.Client.Keys(ctx, pattern).Result()
		if err != nil {
			tb.Fatalf("redistest: KEYS %s: %v", pattern, err)
		}
		return keys
	}
	var mu sync.Mutex
	var all []string
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		keys, err := m.Keys(ctx, pattern).Result()
		mu.Lock()
		all = append(all, keys...)
		mu.Unlock()
		return err
	})
	if err != nil {
		tb.Fatalf("redistest: KEYS %s: %v", pattern, err)
	}
	return all
}

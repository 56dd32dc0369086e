package redistest

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A test that runs beside its package's other tests (t.Parallel) needs a
// Redis of its own: each New flushes the database it gives. The embedded
// server is one per New already. On a real Redis, Own leases the test a
// database above the packages' own 1..15, for as long as it runs; the
// server must have more than 16 (.ci/run starts it with --databases 64). A
// cluster has one database, and a server with 16 has none to spare: there
// the test runs in its turn, as before.

// leasePrefix names the lease keys, in database 0: one per database taken,
// its value the test holding it, expiring after leaseTTL should a test
// process die without giving it back.
const (
	leasePrefix = "redistest:lease:"
	leaseTTL    = time.Hour
	firstOwnDB  = 16
)

// owned maps a test's name to the database it leased (Own).
var owned sync.Map

// Own gives tb a Redis database of its own, which every later New of tb
// (and of its subtests) returns in place of its package's, and reports
// whether it could: true on the embedded server, on a real Redis with a
// database free above 15; false on a cluster or a server with 16.
func Own(tb testing.TB) bool {
	tb.Helper()
	if ClusterWanted() {
		return false
	}
	_, opt, ok := realRedis(tb)
	if !ok {
		return true
	}
	opt.DB = 0
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	n := databases(ctx, c)
	holder := fmt.Sprintf("%d %s", os.Getpid(), tb.Name())
	for db := firstOwnDB; db < n; db++ {
		key := leasePrefix + strconv.Itoa(db)
		ok, err := c.SetNX(ctx, key, holder, leaseTTL).Result()
		if err != nil {
			tb.Fatalf("redistest: lease database %d: %v", db, err)
		}
		if !ok {
			continue
		}
		owned.Store(tb.Name(), db)
		tb.Cleanup(func() {
			owned.Delete(tb.Name())
			c := redis.NewClient(opt)
			defer c.Close()
			if c.Get(ctx, key).Val() == holder {
				c.Del(ctx, key)
			}
		})
		return true
	}
	return false
}

// realRedis is REDIS_URL and the options it gives; ok is false where it is
// unset (each New starts an embedded server).
func realRedis(tb testing.TB) (base string, opt *redis.Options, ok bool) {
	tb.Helper()
	base = os.Getenv("REDIS_URL")
	if base == "" {
		return "", nil, false
	}
	opt, err := redis.ParseURL(base)
	if err != nil {
		tb.Fatalf("redistest: REDIS_URL: %v", err)
	}
	return base, opt, true
}

// databases is the server's number of databases, 16 where CONFIG is not
// allowed (a managed Redis).
func databases(ctx context.Context, c *redis.Client) int {
	v, err := c.ConfigGet(ctx, "databases").Result()
	if err != nil {
		return 16
	}
	n, err := strconv.Atoi(v["databases"])
	if err != nil {
		return 16
	}
	return n
}

// ownDB is the database tb, or the test it is a subtest of, leased (Own).
func ownDB(tb testing.TB) (int, bool) {
	name := tb.Name()
	for {
		if db, ok := owned.Load(name); ok {
			return db.(int), true
		}
		i := strings.LastIndexByte(name, '/')
		if i < 0 {
			return 0, false
		}
		name = name[:i]
	}
}

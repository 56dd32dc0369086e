package billing

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"
)

// prefix starts every key this package writes (see the package comment).
const prefix = "cp:"

// Service is the billing domain backed by one Redis. It is safe for
// concurrent use, and any number of processes may share the Redis.
type Service struct {
	rdb      redis.UniversalClient
	cfg      Config
	limiter  *redis_rate.Limiter
	now      func() time.Time // replaced in tests
	waiters  waiters          // requests of this process waiting for a key's slot
	wakeOnce sync.Once        // starts listenWakes
}

// New returns a Service over rdb. Zero Config fields take their defaults.
func New(rdb redis.UniversalClient, cfg Config) *Service {
	return &Service{
		rdb:     rdb,
		cfg:     cfg.withDefaults(),
		limiter: redis_rate.NewLimiter(rdb),
		now:     time.Now,
	}
}

// Config returns the effective configuration, defaults applied.
func (s *Service) Config() Config { return s.cfg }

// Cost returns the price in credits of one call of op.
func (s *Service) Cost(op string) int64 {
	if c, ok := s.cfg.CostPerOp[op]; ok {
		return c
	}
	return s.cfg.DefaultCost
}

func acctKey(id string) string   { return prefix + "acct:" + id }
func holdKey(id string) string   { return prefix + "hold:" + id }
func ledgerKey(id string) string { return prefix + "ledger:" + id }
func assetsKey(id string) string { return prefix + "assets:" + id }
func assetKey(id string) string  { return prefix + "asset:" + id }

const holdsKey = prefix + "holds"

var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// newID returns kind + "_" + 16 random base32 characters (80 bits), e.g.
// "acct_k3j5..."; ids need to be unique, not secret.
func newID(kind string) string {
	b := make([]byte, 10)
	rand.Read(b) // never fails (crypto/rand since Go 1.24)
	return kind + "_" + idEncoding.EncodeToString(b)
}

// validID reports whether id could be one of ours. It keeps junk from
// client input (asset ids, admin paths) out of key names.
func validID(id string) bool {
	if len(id) == 0 || len(id) > 64 {
		return false
	}
	return strings.IndexFunc(id, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}) < 0
}

func unixMS(t time.Time) int64 { return t.UnixMilli() }

package billing

import (
	"context"
	"crypto/rand"
	"encoding/base32"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
	"carphoto/objstore"
)

// prefix starts every key this package writes (see the package comment).
const prefix = "cp:"

// Service is the billing domain backed by one Redis. It is safe for
// concurrent use, and any number of processes may share the Redis.
type Service struct {
	rdb      redis.UniversalClient
	cfg      Config
	durable  *redisha.Durability // how money writes wait for a replica
	limiter  *redis_rate.Limiter
	now      func() time.Time // replaced in tests
	assets   objstore.Store   // where assets' images are (Config.Assets)
	waiters  waiters          // requests of this process waiting for a key's slot
	wakeOnce sync.Once        // starts listenWakes
	enlisted sync.Map         // slot → when this process last listed it in cp:holdslots
}

// New returns a Service over rdb. Zero Config fields take their defaults.
func New(rdb redis.UniversalClient, cfg Config) *Service {
	s := &Service{
		rdb:     rdb,
		cfg:     cfg.withDefaults(),
		limiter: redis_rate.NewLimiter(rdb),
		assets:  cfg.Assets,
		now:     time.Now,
	}
	s.durable = &redisha.Durability{Replicas: s.cfg.WaitReplicas, Timeout: s.cfg.WaitTimeout,
		Degraded: func(master string, connected int) {
			s.cfg.Log.Warn().Str("master", master).Int("replicas", connected).Int("wanted", s.cfg.WaitReplicas).
				Msg("billing: a money write's master has fewer replicas than REDIS_WAIT_REPLICAS: its writes are confirmed by those it has")
		}}
	return s
}

// durableTry bounds how long a call keeps trying through a failover when
// its caller's context has no earlier deadline.
const durableTry = 15 * time.Second

// rideThrough runs fn again while Redis is out of reach (restarting,
// failing over, a slot moving: redisha.Transient), with backoff, until ctx
// ends, or for durableTry when ctx has no deadline: a blip within the
// caller's deadline costs its request time, not its answer. It returns
// fn's last error; any other error ends it at once. Every Service method a
// request makes rides through this way, so callers never retry billing.
func rideThrough(ctx context.Context, fn func(ctx context.Context) error) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, durableTry)
		defer cancel()
	}
	return redisha.Retry(ctx, fn)
}

// write runs script as a money write: on the master of keys[0], confirmed
// by the replicas Config.WaitReplicas asks for. idempotent scripts (the
// same arguments give the same outcome when run again) are run again with
// the same arguments while Redis fails over or the replicas lag, so an
// answer lost with its master is made again on the new one.
func (s *Service) write(ctx context.Context, idempotent bool, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	if !idempotent {
		return s.durable.Durable(ctx, s.rdb, script, keys, args...)
	}
	var cmd *redis.Cmd
	err := rideThrough(ctx, func(ctx context.Context) (err error) {
		cmd, err = s.durable.Durable(ctx, s.rdb, script, keys, args...)
		return err
	})
	return cmd, err
}

// Config returns the effective configuration, defaults applied.
func (s *Service) Config() Config { return s.cfg }

// Call is what a call does, as it is priced and named in the ledger: its
// operation and, for car-shadow and car-cutout that hide the plates or give
// them the design first, that plate operation (blur-plates or plate-logo;
// "" for none).
type Call struct {
	Op, PlateOp string
}

// Name is the call as the ledger and the account's costWithPlates name it:
// its operation, or "car-shadow+blur-plates" for one that does two.
func (c Call) Name() string {
	if c.PlateOp == "" {
		return c.Op
	}
	return c.Op + "+" + c.PlateOp
}

// Price is the credits one call costs: its operation's price, plus its
// plate operation's. It is the one price of a photo call: held, charged
// and listed on the account.
func (s *Service) Price(c Call) int64 {
	p := s.opPrice(c.Op)
	if c.PlateOp != "" {
		p += s.opPrice(c.PlateOp)
	}
	return p
}

// VideoPrice is the credits a video-blur job of seconds of video costs:
// VideoCostPer10s per started 10 seconds.
func (s *Service) VideoPrice(seconds float64) int64 {
	return int64(math.Ceil(seconds/10)) * s.cfg.VideoCostPer10s
}

// opPrice is one operation's price.
func (s *Service) opPrice(op string) int64 {
	if c, ok := s.cfg.CostPerOp[op]; ok {
		return c
	}
	return s.cfg.DefaultCost
}

// An account's keys share the hash tag {account_id}, so that every script
// on them runs on one slot of a Redis Cluster (see the package comment).
func acctKey(id string) string            { return prefix + "acct:{" + id + "}" }
func ledgerKey(id string) string          { return prefix + "ledger:{" + id + "}" }
func holdKey(acct, hold string) string    { return prefix + "hold:{" + acct + "}:" + hold }
func assetsKey(id string) string          { return prefix + "assets:{" + id + "}" }
func assetKey(acct, asset string) string  { return prefix + "asset:{" + acct + "}:" + asset }
func assetBytesKey(id string) string      { return prefix + "assetbytes:{" + id + "}" }
func keyIndexKey(hash string) string      { return prefix + "key:" + hash }
func holdsKey(acct string) string         { return slotHoldsKey(redisha.Slot(acctKey(acct))) }
func slotHoldsKey(slot int) string        { return prefix + "holds:{" + redisha.SlotTag(slot) + "}" }
func holdMember(acct, hold string) string { return acct + ":" + hold }

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

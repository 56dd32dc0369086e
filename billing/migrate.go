package billing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Layout is the version of the key layout this package writes: 2 is the
// one under per-account hash tags (cp:acct:{acct_…}), which Redis Cluster
// needs; 1, before it, named keys without braces. LayoutKey holds the
// version of a Redis once MigrateLayout has found nothing left to move.
const (
	Layout    = "2"
	LayoutKey = prefix + "layout"
)

// Migration counts what MigrateLayout did.
type Migration struct {
	Moved     int `json:"moved"`     // keys renamed to the new layout
	Holds     int `json:"holds"`     // open holds put in their slot's index
	Conflicts int `json:"conflicts"` // old keys left alone: the new name was taken
	Skipped   int `json:"skipped"`   // old keys that name no account (left alone)
}

// MigrateLayout renames the keys of layout 1 (a single Redis before Redis
// Cluster support) to layout 2, and then records Layout in LayoutKey. It
// is idempotent: keys already moved are not seen again, and running it
// twice, or on a new Redis, does nothing. Old keys whose new name is taken
// (an old process wrote after an earlier run) are counted as Conflicts and
// left for a person to look at; LayoutKey is set only when none are left.
//
// Run it with no process of the old version left running (or run it again
// once the last has stopped). The per-request keys (cp:req:…), the
// in-flight counts and the rate limits are not moved: they last seconds to
// minutes, and API keys' index (cp:key:…) keeps its name.
func MigrateLayout(ctx context.Context, rdb redis.UniversalClient) (Migration, error) {
	var m Migration
	var holds []string
	err := scanAll(ctx, rdb, prefix+"*", func(key string) error {
		if strings.Contains(key, "{") {
			return nil
		}
		kind, id, _ := strings.Cut(strings.TrimPrefix(key, prefix), ":")
		if !validID(id) && kind != "idem" {
			return nil
		}
		switch kind {
		case "acct":
			return m.move(ctx, rdb, key, acctKey(id))
		case "ledger":
			return m.move(ctx, rdb, key, ledgerKey(id))
		case "assets":
			return m.move(ctx, rdb, key, assetsKey(id))
		case "asset":
			acct, err := rdb.HGet(ctx, key, "account").Result()
			if err != nil || !validID(acct) {
				m.Skipped++
				return ignoreNil(err)
			}
			return m.move(ctx, rdb, key, assetKey(acct, id))
		case "hold":
			holds = append(holds, id)
		case "idem":
			// The idempotency package's records (cp:idem:<account>:<hash>)
			// take their account's tag too; they last IDEMPOTENCY_TTL.
			acct, hash, ok := strings.Cut(id, ":")
			if ok && validID(acct) {
				return m.move(ctx, rdb, key, prefix+"idem:{"+acct+"}:"+hash)
			}
		}
		return nil
	})
	if err != nil {
		return m, err
	}
	for _, id := range holds {
		if err := m.moveHold(ctx, rdb, id); err != nil {
			return m, err
		}
	}
	// The old sweep index: what is left in it names holds that are gone.
	const oldHolds = prefix + "holds"
	ids, err := rdb.ZRange(ctx, oldHolds, 0, -1).Result()
	if err != nil {
		return m, fmt.Errorf("migrate %s: %w", oldHolds, err)
	}
	for _, id := range ids {
		if n, err := rdb.Exists(ctx, prefix+"hold:"+id).Result(); err != nil {
			return m, err
		} else if n == 0 {
			rdb.ZRem(ctx, oldHolds, id)
		}
	}
	if m.Conflicts == 0 {
		if err := rdb.Set(ctx, LayoutKey, Layout, 0).Err(); err != nil {
			return m, fmt.Errorf("migrate: record the layout: %w", err)
		}
	}
	return m, nil
}

// LayoutCurrent reports whether rdb is known to hold layout 2 only.
func LayoutCurrent(ctx context.Context, rdb redis.UniversalClient) (bool, error) {
	v, err := rdb.Get(ctx, LayoutKey).Result()
	if errors.Is(err, redis.Nil) {
		return false, nil
	}
	return v == Layout, err
}

// moveHold moves cp:hold:<id> under its account and, while it is held,
// into its slot's index, scored by its expiry as before.
func (m *Migration) moveHold(ctx context.Context, rdb redis.UniversalClient, id string) error {
	old := prefix + "hold:" + id
	v, err := rdb.HMGet(ctx, old, "account", "state", "expires_at").Result()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", old, err)
	}
	acct, _ := v[0].(string)
	state, _ := v[1].(string)
	exp, _ := v[2].(string)
	if !validID(acct) {
		m.Skipped++
		return nil
	}
	if state == "held" {
		// Indexed first: a hold in the index but not yet moved is skipped
		// by the sweep (as unknown) only until the move below.
		if err := rdb.ZAdd(ctx, holdsKey(acct), redis.Z{Score: atof(exp), Member: holdMember(acct, id)}).Err(); err != nil {
			return fmt.Errorf("migrate %s: %w", old, err)
		}
		m.Holds++
	}
	if err := m.move(ctx, rdb, old, holdKey(acct, id)); err != nil {
		return err
	}
	return rdb.ZRem(ctx, prefix+"holds", id).Err()
}

// move renames old to new unless new exists: RENAMENX on one Redis (one
// atomic step, the TTL kept), DUMP and RESTORE on a cluster, where the two
// names may live on different nodes.
func (m *Migration) move(ctx context.Context, rdb redis.UniversalClient, old, new string) error {
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		ok, err := rdb.RenameNX(ctx, old, new).Result()
		if errors.Is(err, redis.Nil) || (err != nil && strings.Contains(err.Error(), "no such key")) {
			return nil // gone meanwhile
		}
		if err != nil {
			return fmt.Errorf("migrate %s: %w", old, err)
		}
		if ok {
			m.Moved++
		} else {
			m.Conflicts++
		}
		return nil
	}
	dump, err := rdb.Dump(ctx, old).Result()
	if errors.Is(err, redis.Nil) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("migrate %s: %w", old, err)
	}
	ttl, err := rdb.PTTL(ctx, old).Result()
	if err != nil {
		return fmt.Errorf("migrate %s: %w", old, err)
	}
	if ttl < 0 {
		ttl = 0
	}
	if err := rdb.Restore(ctx, new, ttl, dump).Err(); err != nil {
		if strings.HasPrefix(err.Error(), "BUSYKEY") {
			m.Conflicts++
			return nil
		}
		return fmt.Errorf("migrate %s: %w", old, err)
	}
	m.Moved++
	return rdb.Del(ctx, old).Err()
}

// scanAll calls fn for every key matching pattern, on every master of a
// cluster, one call at a time.
func scanAll(ctx context.Context, rdb redis.UniversalClient, pattern string, fn func(key string) error) error {
	var mu sync.Mutex
	scan := func(ctx context.Context, c redis.UniversalClient) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			mu.Lock()
			err := fn(iter.Val())
			mu.Unlock()
			if err != nil {
				return err
			}
		}
		return iter.Err()
	}
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	}
	return scan(ctx, rdb)
}

func ignoreNil(err error) error {
	if errors.Is(err, redis.Nil) {
		return nil
	}
	return err
}

func atof(s string) float64 {
	var f float64
	fmt.Sscan(s, &f)
	return f
}

package service

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"carphoto/billing"
	"carphoto/objstore"
)

// adminUsage is shown with every usage error of the admin commands.
const adminUsage = `admin commands (against the Redis at REDIS_URL), each printing one JSON object:
  carphoto accounts create [--credits N] [--name S]
  carphoto keys rotate ACCOUNT_ID
  carphoto keys revoke ACCOUNT_ID
  carphoto credits add ACCOUNT_ID N      (N may be negative; the balance never goes below 0)
  carphoto credits show ACCOUNT_ID`

// adminRedis opens the service's Redis for an admin command: the one at
// REDIS_URL or the cluster at REDIS_CLUSTER_URL, read with the service's
// own configuration.
func adminRedis(ctx context.Context, getenv func(string) string, cmd string) (redis.UniversalClient, Config, error) {
	cfg, err := LoadConfig(getenv)
	if err != nil {
		return nil, cfg, fmt.Errorf("configuration:\n%w", err)
	}
	if !cfg.redisConfigured() {
		return nil, cfg, errors.New("REDIS_URL is not set: the admin commands work on the service's Redis, e.g. REDIS_URL=redis://localhost:6379/0 carphoto " + cmd + " (or REDIS_CLUSTER_URL for a Redis Cluster)")
	}
	cfg.RedisPoolSize = 20
	rdb, addr, err := cfg.redisClient(cfg.RedisURL)
	if err != nil {
		return nil, cfg, err
	}
	if err := rdb.Ping(ctx).Err(); err != nil {
		rdb.Close()
		return nil, cfg, fmt.Errorf("redis at %s: %w", addr, err)
	}
	return rdb, cfg, nil
}

// adminRequestID marks the CLI's balance changes in the ledger.
const adminRequestID = "admin-cli"

// runAdmin runs one admin command; args[0] is "accounts", "keys" or
// "credits". It works on the service's Redis directly, so it needs no
// Running web process.
func runAdmin(ctx context.Context, getenv func(string) string, args []string, stdout io.Writer) error {
	if len(args) < 2 {
		return usageErr("missing subcommand")
	}
	cmd := args[0] + " " + args[1]
	rest := args[2:]
	switch cmd {
	case "accounts create", "keys rotate", "keys revoke", "credits add", "credits show":
	default:
		return usageErr(fmt.Sprintf("unknown command %q", cmd))
	}

	rdb, cfg, err := adminRedis(ctx, getenv, cmd)
	if err != nil {
		return err
	}
	defer rdb.Close()
	b := billing.New(rdb, billing.Config{WaitReplicas: cfg.RedisWaitReplicas, WaitTimeout: cfg.RedisWaitTimeout})
	out := json.NewEncoder(stdout)

	switch cmd {
	case "accounts create":
		fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		credits := fs.Int64("credits", 0, "starting balance")
		name := fs.String("name", "", "account name")
		if err := fs.Parse(rest); err != nil {
			return usageErr(err.Error())
		}
		if fs.NArg() > 0 {
			return usageErr(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
		}
		a, key, err := b.CreateAccount(ctx, *name, *credits)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"accountId": a.ID, "apiKey": key, "credits": a.Credits})

	case "keys rotate", "keys revoke":
		id, err := oneID(cmd, rest)
		if err != nil {
			return err
		}
		if args[1] == "revoke" {
			if err := b.RevokeKey(ctx, id); err != nil {
				return err
			}
			return out.Encode(map[string]any{"accountId": id, "revoked": true})
		}
		key, err := b.RotateKey(ctx, id)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"accountId": id, "apiKey": key})

	case "credits add":
		if len(rest) != 2 {
			return usageErr("credits add takes ACCOUNT_ID and N")
		}
		n, err := strconv.ParseInt(rest[1], 10, 64)
		if err != nil || n == 0 {
			return usageErr(fmt.Sprintf("N must be a non-zero integer, not %q", rest[1]))
		}
		bal, err := b.AddCredits(ctx, rest[0], n, adminRequestID)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"accountId": rest[0], "credits": bal})

	default: // credits show
		id, err := oneID(cmd, rest)
		if err != nil {
			return err
		}
		a, err := b.Account(ctx, id)
		if err != nil {
			return err
		}
		return out.Encode(map[string]any{"accountId": a.ID, "credits": a.Credits})
	}
}

func oneID(cmd string, rest []string) (string, error) {
	if len(rest) != 1 {
		return "", usageErr(cmd + " takes exactly one ACCOUNT_ID")
	}
	return rest[0], nil
}

func usageErr(msg string) error {
	return fmt.Errorf("%s\n\n%s", msg, adminUsage)
}

// runMigrate runs billing.MigrateLayout, whether or not the Redis is
// marked as migrated already, and prints what it did.
func runMigrate(ctx context.Context, getenv func(string) string, args []string, stdout io.Writer) error {
	if len(args) > 0 {
		return usageErr(fmt.Sprintf("migrate takes no arguments, not %q", args[0]))
	}
	rdb, cfg, err := adminRedis(ctx, getenv, "migrate")
	if err != nil {
		return err
	}
	defer rdb.Close()
	m, err := billing.MigrateLayout(ctx, rdb)
	if err != nil {
		return err
	}
	assets, err := cfg.openStore(ctx, objstore.Assets)
	if err != nil {
		return err
	}
	bc := cfg.BillingConfig(zerolog.Nop())
	bc.Assets = assets
	am, err := billing.New(rdb, bc).MigrateAssets(ctx)
	if err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(struct {
		billing.Migration
		Assets billing.AssetMigration `json:"assets"`
	}{m, am})
}

// migrateAssets moves the images of assets saved before the asset store
// out of Redis at the start of a web process, once per Redis: a Redis
// whose assets were all moved is not scanned again.
func migrateAssets(ctx context.Context, b *billing.Service, log zerolog.Logger) error {
	ok, err := b.AssetsStored(ctx)
	if err != nil {
		return fmt.Errorf("redis: read whether assets are in the store: %w", err)
	}
	if ok {
		return nil
	}
	start := time.Now()
	m, err := b.MigrateAssets(ctx)
	if err != nil {
		return fmt.Errorf("redis: move assets to the object store: %w", err)
	}
	log.Info().Int("moved", m.Moved).Int("stored", m.Stored).Int("skipped", m.Skipped).
		Dur("took", time.Since(start)).Msg("assets: images moved from Redis to the object store")
	return nil
}

// migrateLayout moves the keys of the layout before Redis Cluster support
// to the current one at the start of a web process, once per Redis: a
// Redis marked as migrated is not scanned again.
func migrateLayout(ctx context.Context, rdb redis.UniversalClient, log zerolog.Logger) error {
	ok, err := billing.LayoutCurrent(ctx, rdb)
	if err != nil {
		return fmt.Errorf("redis: read the key layout: %w", err)
	}
	if ok {
		return nil
	}
	start := time.Now()
	m, err := billing.MigrateLayout(ctx, rdb)
	if err != nil {
		return fmt.Errorf("redis: move keys to layout %s: %w", billing.Layout, err)
	}
	ev := log.Info()
	if m.Conflicts > 0 {
		ev = log.Warn()
	}
	ev.Int("moved", m.Moved).Int("holds", m.Holds).Int("conflicts", m.Conflicts).Int("skipped", m.Skipped).
		Dur("took", time.Since(start)).Str("layout", billing.Layout).Msg("redis: key layout migration")
	return nil
}

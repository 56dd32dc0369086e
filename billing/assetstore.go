package billing

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/redis/go-redis/v9"

	"carphoto"
)

// AssetsStoredKey is set once MigrateAssets has found no asset whose image
// is still in Redis: a web process then starts without scanning for them.
const AssetsStoredKey = prefix + "assetstore"

// AssetMigration counts what MigrateAssets did.
type AssetMigration struct {
	Moved   int `json:"moved"`   // images copied to the store and removed from Redis
	Stored  int `json:"stored"`  // assets already in the store
	Skipped int `json:"skipped"` // keys that name no account's asset (left alone)
}

// storeAssetScript points an asset's record at its image in the store and
// drops the image from Redis, counting its bytes in the account's total,
// once: KEYS[1] cp:asset:{account}:{asset}, KEYS[2] cp:assetbytes:{account};
// ARGV account, store key, bytes. It returns 1, or 0 when the record is
// not the account's, or no longer holds its image.
var storeAssetScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'account') ~= ARGV[1] then return 0 end
if (redis.call('HGET', KEYS[1], 'store_key') or '') ~= '' then return 0 end
if redis.call('HEXISTS', KEYS[1], 'data') == 0 then return 0 end
redis.call('HSET', KEYS[1], 'store_key', ARGV[2], 'bytes', ARGV[3])
redis.call('HDEL', KEYS[1], 'data')
redis.call('INCRBY', KEYS[2], ARGV[3])
return 1
`)

// storeAsset moves the image of an asset saved before the asset store
// from its record to the store: copied, read back and compared, and only
// then removed from Redis. It reports whether it moved it; an asset
// already in the store, or gone, is not an error.
func (s *Service) storeAsset(ctx context.Context, accountID, assetID string) (bool, error) {
	if s.assets == nil {
		return false, carphoto.Errorf(carphoto.EInternal, "internal error: no asset store")
	}
	v, err := s.rdb.HMGet(ctx, assetKey(accountID, assetID), "account", "store_key", "content_type", "data").Result()
	if err != nil {
		return false, storeErr("read asset", err)
	}
	owner, _ := v[0].(string)
	stored, _ := v[1].(string)
	ct, _ := v[2].(string)
	data, _ := v[3].(string)
	if owner != accountID || stored != "" || data == "" {
		return false, nil
	}
	key := storeKey(assetID, ct)
	if _, err := s.assets.Put(ctx, key, strings.NewReader(data)); err != nil {
		return false, carphoto.Wrap(err, carphoto.EUnavailable, "could not move the asset to the store; please retry")
	}
	if err := s.confirm(ctx, key, data); err != nil {
		return false, carphoto.Wrap(err, carphoto.EUnavailable, "could not move the asset to the store; please retry")
	}
	n, err := storeAssetScript.Run(ctx, s.rdb, []string{assetKey(accountID, assetID), assetBytesKey(accountID)},
		accountID, key, len(data)).Int()
	if err != nil {
		return false, storeErr("move asset", err)
	}
	if n == 0 {
		// Deleted meanwhile: its copy would be named by no record.
		if now, _ := s.rdb.HGet(ctx, assetKey(accountID, assetID), "store_key").Result(); now != key {
			s.assets.Delete(ctx, key)
		}
	}
	return n == 1, nil
}

// confirm reads key back from the store and compares it with data.
func (s *Service) confirm(ctx context.Context, key, data string) error {
	f, err := s.assets.Open(ctx, key)
	if err != nil {
		return err
	}
	defer f.Close()
	got, err := io.ReadAll(io.LimitReader(f, int64(len(data))+1))
	if err != nil {
		return err
	}
	if !bytes.Equal(got, []byte(data)) {
		return fmt.Errorf("asset %s: the store gave back %d bytes, not the %d written", key, len(got), len(data))
	}
	return nil
}

// MigrateAssets moves every asset image still held in Redis (the layout
// before the asset store) to the store, each removed from Redis only once
// its copy is read back whole, and then sets AssetsStoredKey. It is
// idempotent: an asset moved is not moved again, and running it twice, or
// on a new Redis, moves nothing. Balances and every other key are left
// alone. Run it after MigrateLayout.
func (s *Service) MigrateAssets(ctx context.Context) (AssetMigration, error) {
	var m AssetMigration
	var errs []error
	err := scanAll(ctx, s.rdb, prefix+"asset:{*", func(key string) error {
		acct, id, ok := strings.Cut(strings.TrimPrefix(key, prefix+"asset:{"), "}:")
		if !ok || !validID(acct) || !validID(id) {
			m.Skipped++
			return nil
		}
		moved, err := s.storeAsset(ctx, acct, id)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("asset %s of %s: %w", id, acct, err))
		case moved:
			m.Moved++
		default:
			m.Stored++
		}
		return nil
	})
	if err != nil {
		return m, fmt.Errorf("migrate assets: %w", err)
	}
	if len(errs) > 0 {
		return m, fmt.Errorf("migrate assets: %d left in Redis: %w", len(errs), errors.Join(errs...))
	}
	if err := s.rdb.Set(ctx, AssetsStoredKey, "1", 0).Err(); err != nil {
		return m, fmt.Errorf("migrate assets: record it: %w", err)
	}
	return m, nil
}

// AssetsStored reports whether MigrateAssets has run to its end on this
// Redis.
func (s *Service) AssetsStored(ctx context.Context) (bool, error) {
	n, err := s.rdb.Exists(ctx, AssetsStoredKey).Result()
	return n == 1, err
}

// AssetData returns the image of an asset of the account of kind, read
// from the asset store, refused as AssetRef refuses it: for tools and
// tests; a call's worker reads the image by its key (AssetRef.Key).
func (s *Service) AssetData(ctx context.Context, accountID, assetID, kind string) ([]byte, error) {
	ref, err := s.AssetRef(ctx, accountID, assetID, kind)
	if err != nil {
		return nil, err
	}
	f, err := s.assets.Open(ctx, ref.Key)
	if err != nil {
		return nil, fmt.Errorf("read asset %s: %w", assetID, err)
	}
	defer f.Close()
	return io.ReadAll(f)
}

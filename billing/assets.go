package billing

import (
	"bytes"
	"context"
	"errors"
	"image"
	_ "image/jpeg" // asset formats: registered for image.DecodeConfig
	_ "image/png"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"carphoto"

	"github.com/redis/go-redis/v9"
	_ "golang.org/x/image/webp"
)

// maxAssetNameLen caps the stored file name, in bytes.
const maxAssetNameLen = 255

// Asset kinds: what a saved image is for. A call names an asset in the
// field of its kind (logoAssetId a design, backgroundAssetId a backdrop)
// and is refused one of the other kind.
const (
	// AssetDesign is a plate design or logo (plate-logo, logo-overlay).
	// Assets stored before kinds existed are designs.
	AssetDesign = "design"
	// AssetBackdrop is a studio backdrop for car-shadow and car-cutout.
	AssetBackdrop = "backdrop"
)

// AssetKinds lists the kinds, the default first.
var AssetKinds = []string{AssetDesign, AssetBackdrop}

// Asset is a saved image in an account's Assets library: a plate design
// or a backdrop (Kind). The JSON form is the one the API returns.
type Asset struct {
	ID          string    `json:"id"`
	Kind        string    `json:"kind"`
	Name        string    `json:"name"` // the uploaded file's name
	ContentType string    `json:"contentType"`
	Bytes       int64     `json:"bytes"`
	Width       int       `json:"width"`
	Height      int       `json:"height"`
	CreatedAt   time.Time `json:"createdAt"`
}

var contentTypes = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}

// addAssetScript records an asset whose image is in the store unless the
// account's library is full: KEYS[1] cp:assets:{account}, KEYS[2]
// cp:asset:{account}:{asset}, KEYS[3] cp:assetbytes:{account}; ARGV: the
// limit on assets, the limit on bytes, the asset's bytes, created (ms),
// asset id, then field/value pairs. It returns 1, 0 when the library holds
// its number of assets, -1 when the bytes would pass the limit.
var addAssetScript = redis.NewScript(`
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
if tonumber(redis.call('GET', KEYS[3]) or '0') + tonumber(ARGV[3]) > tonumber(ARGV[2]) then return -1 end
redis.call('HSET', KEYS[2], unpack(ARGV, 6))
redis.call('ZADD', KEYS[1], ARGV[4], ARGV[5])
redis.call('INCRBY', KEYS[3], ARGV[3])
return 1
`)

// AssetLimits are the bytes and pixels an asset of kind may have.
func (s *Service) AssetLimits(kind string) (maxBytes int64, maxPixels int) {
	if kind == AssetBackdrop {
		return s.cfg.MaxBackdropBytes, s.cfg.MaxBackdropPixels
	}
	return s.cfg.MaxAssetBytes, s.cfg.MaxAssetPixels
}

// CheckAssetBytes refuses an unknown kind (EInvalidParams) and a file of
// n bytes too large for an asset of kind (EPayloadTooLarge). The web side
// asks it before it reads the file's header, so that a file too large is
// told as such whatever it holds (413 before 400), and a wrong kind is
// named rather than the file's content.
func (s *Service) CheckAssetBytes(kind string, n int64) error {
	if !slices.Contains(AssetKinds, kind) {
		return carphoto.Errorf(carphoto.EInvalidParams, "kind must be one of %s, not %q", strings.Join(AssetKinds, ", "), kind)
	}
	if maxBytes, _ := s.AssetLimits(kind); n > maxBytes {
		return carphoto.Errorf(carphoto.EPayloadTooLarge, "the file is %d bytes; a %s asset may have at most %d", n, kind, maxBytes)
	}
	return nil
}

// CreateAsset saves data, a PNG, JPEG or WebP image of kind (AssetDesign
// or AssetBackdrop) uploaded as filename, in the account's library, held
// to its kind's limits (AssetLimits) and the account's (MaxAssets,
// MaxAssetStorageBytes). The image goes to the asset store; Redis keeps
// its record only. Only the image header is read: the image is decoded
// when a call uses it. Too big is EPayloadTooLarge, not an image or an
// unknown kind EInvalidParams, a full library EAssetLimitReached.
func (s *Service) CreateAsset(ctx context.Context, accountID, kind, filename string, data []byte) (Asset, error) {
	if err := s.CheckAssetBytes(kind, int64(len(data))); err != nil {
		return Asset{}, err
	}
	_, maxPixels := s.AssetLimits(kind)
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	ct, ok := contentTypes[format]
	if err != nil || !ok {
		return Asset{}, carphoto.Errorf(carphoto.EInvalidParams, "file must be a PNG, JPEG or WebP image")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxPixels {
		return Asset{}, carphoto.Errorf(carphoto.EInvalidParams, "the image is %d×%d pixels; a %s asset may have at most %d pixels", cfg.Width, cfg.Height, kind, maxPixels)
	}
	if s.assets == nil {
		return Asset{}, carphoto.Errorf(carphoto.EInternal, "internal error: no asset store")
	}
	a := Asset{
		ID: newID("asset"), Kind: kind, Name: assetName(filename), ContentType: ct, Bytes: int64(len(data)),
		Width: cfg.Width, Height: cfg.Height, CreatedAt: s.now().UTC().Truncate(time.Millisecond),
	}
	// A library already full is refused before the image is stored; the
	// script below decides for good, against uploads that run beside this.
	if err := s.assetRoom(ctx, accountID, a.Bytes); err != nil {
		return Asset{}, err
	}
	key := storeKey(a.ID, a.ContentType)
	if _, err := s.assets.Put(ctx, key, bytes.NewReader(data)); err != nil {
		return Asset{}, carphoto.Wrap(err, carphoto.EUnavailable, "could not save the asset; please retry")
	}
	res, err := addAssetScript.Run(ctx, s.rdb, []string{assetsKey(accountID), assetKey(accountID, a.ID), assetBytesKey(accountID)},
		s.cfg.MaxAssets, s.cfg.MaxAssetStorageBytes, a.Bytes, unixMS(a.CreatedAt), a.ID,
		"account", accountID, "kind", a.Kind, "name", a.Name, "content_type", a.ContentType, "bytes", a.Bytes,
		"width", a.Width, "height", a.Height, "created_at", unixMS(a.CreatedAt), "store_key", key,
	).Int()
	if err != nil || res != 1 {
		// Not recorded: the image goes too. Should this delete fail, the
		// object is left unnamed by any record, and costs no account.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if derr := s.assets.Delete(dctx, key); derr != nil {
			s.cfg.Log.Warn().Err(derr).Str("key", key).Msg("assets: delete an image whose record was not written")
		}
	}
	if err != nil {
		return Asset{}, storeErr("save asset", err)
	}
	if res != 1 {
		return Asset{}, s.errAssetLimit(res, a.Bytes)
	}
	return a, nil
}

// assetRoom refuses an asset of size bytes that the account's library has
// no room for, as the script would.
func (s *Service) assetRoom(ctx context.Context, accountID string, size int64) error {
	var n *redis.IntCmd
	var used *redis.StringCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		n = p.ZCard(ctx, assetsKey(accountID))
		used = p.Get(ctx, assetBytesKey(accountID))
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return storeErr("save asset", err)
	}
	u, _ := strconv.ParseInt(used.Val(), 10, 64)
	switch {
	case n.Val() >= int64(s.cfg.MaxAssets):
		return s.errAssetLimit(0, size)
	case u+size > s.cfg.MaxAssetStorageBytes:
		return s.errAssetLimit(-1, size)
	}
	return nil
}

// errAssetLimit is the refusal of a full library: by number (0) or by
// bytes (-1), naming the limit.
func (s *Service) errAssetLimit(res int, size int64) error {
	if res == 0 {
		return carphoto.Errorf(carphoto.EAssetLimitReached, "the Assets library holds at most %d assets; delete one first", s.cfg.MaxAssets)
	}
	return carphoto.Errorf(carphoto.EAssetLimitReached,
		"the Assets library holds at most %d bytes of images (MAX_ASSET_STORAGE_BYTES), and this one (%d bytes) does not fit; delete one first",
		s.cfg.MaxAssetStorageBytes, size)
}

// storeKey names an asset's image in the asset store: its id, with the
// extension of its type for whoever looks into the bucket.
func storeKey(assetID, contentType string) string {
	ext := ".img"
	switch contentType {
	case "image/png":
		ext = ".png"
	case "image/jpeg":
		ext = ".jpg"
	case "image/webp":
		ext = ".webp"
	}
	return assetID + ext
}

// assetName keeps the base name of an uploaded file, as valid UTF-8 of
// bounded length.
func assetName(filename string) string {
	name := path.Base(strings.ReplaceAll(filename, `\`, "/"))
	if name == "." || name == "/" {
		name = ""
	}
	name = strings.ToValidUTF8(name, "")
	for len(name) > maxAssetNameLen {
		_, size := utf8.DecodeLastRuneInString(name)
		name = name[:len(name)-size]
	}
	return name
}

var assetFields = []string{"account", "name", "content_type", "bytes", "width", "height", "created_at", "kind"}

// Assets lists the account's library, oldest first.
func (s *Service) Assets(ctx context.Context, accountID string) ([]Asset, error) {
	ids, err := s.rdb.ZRange(ctx, assetsKey(accountID), 0, -1).Result()
	if err != nil {
		return nil, storeErr("list assets", err)
	}
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.HMGet(ctx, assetKey(accountID, id), assetFields...)
		}
		return nil
	})
	if err != nil {
		return nil, storeErr("list assets", err)
	}
	out := make([]Asset, 0, len(ids))
	for i, id := range ids {
		if a, ok := parseAsset(id, accountID, cmds[i].Val()); ok {
			out = append(out, a)
		}
	}
	return out, nil
}

// Asset returns one asset of the account. An unknown id and another
// account's id are the same ENotFound, so ids reveal nothing.
func (s *Service) Asset(ctx context.Context, accountID, assetID string) (Asset, error) {
	if !validID(assetID) {
		return Asset{}, errNoAsset(assetID)
	}
	v, err := s.rdb.HMGet(ctx, assetKey(accountID, assetID), assetFields...).Result()
	if err != nil {
		return Asset{}, storeErr("read asset", err)
	}
	a, ok := parseAsset(assetID, accountID, v)
	if !ok {
		return Asset{}, errNoAsset(assetID)
	}
	return a, nil
}

func parseAsset(id, accountID string, v []any) (Asset, bool) {
	str := func(i int) string { s, _ := v[i].(string); return s }
	num := func(i int) int64 { n, _ := strconv.ParseInt(str(i), 10, 64); return n }
	if str(0) != accountID {
		return Asset{}, false
	}
	return Asset{
		ID: id, Kind: kindOf(str(7)), Name: str(1), ContentType: str(2), Bytes: num(3),
		Width: int(num(4)), Height: int(num(5)), CreatedAt: time.UnixMilli(num(6)).UTC(),
	}, true
}

// kindOf is a stored kind; assets saved before kinds existed have none
// and are designs.
func kindOf(stored string) string {
	if stored == "" {
		return AssetDesign
	}
	return stored
}

// kindField is the request field that names an asset of kind.
func kindField(kind string) string {
	if kind == AssetBackdrop {
		return "backgroundAssetId"
	}
	return "logoAssetId"
}

func errNoAsset(id string) error {
	return carphoto.Errorf(carphoto.ENotFound, "asset %q is not in your Assets library", id)
}

// deleteAssetScript deletes an asset if it belongs to the account and
// frees its bytes: KEYS[1] cp:assets:{account}, KEYS[2]
// cp:asset:{account}:{asset}, KEYS[3] cp:assetbytes:{account}; ARGV account
// id, asset id. It returns the image's key in the store ("" for an asset
// whose image is still in its record), or false when there was nothing of
// the account's.
var deleteAssetScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], 'account') ~= ARGV[1] then return false end
local key = redis.call('HGET', KEYS[2], 'store_key') or ''
if key ~= '' then
  local left = redis.call('DECRBY', KEYS[3], tonumber(redis.call('HGET', KEYS[2], 'bytes') or '0'))
  if left <= 0 then redis.call('DEL', KEYS[3]) end
end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[2])
return key
`)

// DeleteAsset removes an asset of the account, its record first and then
// its image, and frees its bytes; ENotFound like Asset.
func (s *Service) DeleteAsset(ctx context.Context, accountID, assetID string) error {
	if !validID(assetID) {
		return errNoAsset(assetID)
	}
	key, err := deleteAssetScript.Run(ctx, s.rdb, []string{assetsKey(accountID), assetKey(accountID, assetID), assetBytesKey(accountID)}, accountID, assetID).Text()
	if errors.Is(err, redis.Nil) {
		return errNoAsset(assetID)
	}
	if err != nil {
		return storeErr("delete asset", err)
	}
	if key != "" && s.assets != nil {
		// The record is gone, so no call can name the image any more;
		// should this fail, the image stays unnamed and counts for nobody.
		if err := s.assets.Delete(ctx, key); err != nil {
			s.cfg.Log.Warn().Err(err).Str("key", key).Msg("assets: delete the image of a deleted asset")
		}
	}
	return nil
}

// AssetRef is where a call finds an asset's image: its key in the asset
// store, and its size from its record.
type AssetRef struct {
	Key           string
	Width, Height int
}

// AssetRef returns the image of an asset of the account of kind, for a
// call's logoAssetId (AssetDesign) or backgroundAssetId (AssetBackdrop):
// its record is read, never its bytes. An unknown id and another
// account's id are the same EInvalidParams: the request named an asset
// the caller does not have; an asset of the other kind is EInvalidParams
// too, saying which kind it is. An asset whose image is still in Redis
// (saved before the asset store) is moved to the store first.
func (s *Service) AssetRef(ctx context.Context, accountID, assetID, kind string) (ref AssetRef, err error) {
	err = rideThrough(ctx, func(ctx context.Context) (err error) {
		ref, err = s.assetRef(ctx, accountID, assetID, kind)
		return err
	})
	return ref, err
}

func (s *Service) assetRef(ctx context.Context, accountID, assetID, kind string) (AssetRef, error) {
	field := kindField(kind)
	bad := carphoto.Errorf(carphoto.EInvalidParams, "%s %q is not in your Assets library", field, assetID)
	if !validID(assetID) {
		return AssetRef{}, bad
	}
	for range 2 {
		v, err := s.rdb.HMGet(ctx, assetKey(accountID, assetID), "account", "store_key", "kind", "width", "height").Result()
		if err != nil {
			return AssetRef{}, storeErr("read asset", err)
		}
		str := func(i int) string { s, _ := v[i].(string); return s }
		if str(0) != accountID {
			return AssetRef{}, bad
		}
		if got := kindOf(str(2)); got != kind {
			return AssetRef{}, carphoto.Errorf(carphoto.EInvalidParams,
				"%s %q is a %s asset, not a %s: name it in %s, or save the image again with kind=%s", field, assetID, got, kind, kindField(got), kind)
		}
		if key := str(1); key != "" {
			w, _ := strconv.Atoi(str(3))
			h, _ := strconv.Atoi(str(4))
			return AssetRef{Key: key, Width: w, Height: h}, nil
		}
		if _, err := s.storeAsset(ctx, accountID, assetID); err != nil {
			return AssetRef{}, err
		}
	}
	return AssetRef{}, bad
}

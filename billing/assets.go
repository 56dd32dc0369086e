package billing

import (
	"bytes"
	"context"
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
	ContentType string    `json:"content_type"`
	Bytes       int64     `json:"bytes"`
	Width       int       `json:"width"`
	Height      int       `json:"height"`
	CreatedAt   time.Time `json:"created_at"`
}

var contentTypes = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp"}

// addAssetScript stores an asset unless the account's library is full:
// KEYS[1] cp:assets:{account}, KEYS[2] cp:asset:{account}:{asset}; ARGV: limit,
// created (ms), asset id, then field/value pairs. It returns 1, or 0 when full.
var addAssetScript = redis.NewScript(`
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[2], unpack(ARGV, 4))
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[3])
return 1
`)

// AssetLimits are the bytes and pixels an asset of kind may have.
func (s *Service) AssetLimits(kind string) (maxBytes int64, maxPixels int) {
	if kind == AssetBackdrop {
		return s.cfg.MaxBackdropBytes, s.cfg.MaxBackdropPixels
	}
	return s.cfg.MaxAssetBytes, s.cfg.MaxAssetPixels
}

// CreateAsset saves data, a PNG, JPEG or WebP image of kind (AssetDesign
// or AssetBackdrop) uploaded as filename, in the account's library, held
// to its kind's limits (AssetLimits). Only the image header is read: the
// image is decoded when a call uses it. Too big is EPayloadTooLarge, not
// an image or an unknown kind EInvalidParams, a full library
// EAssetLimitReached.
func (s *Service) CreateAsset(ctx context.Context, accountID, kind, filename string, data []byte) (Asset, error) {
	if !slices.Contains(AssetKinds, kind) {
		return Asset{}, carphoto.Errorf(carphoto.EInvalidParams, "kind must be one of %s, not %q", strings.Join(AssetKinds, ", "), kind)
	}
	maxBytes, maxPixels := s.AssetLimits(kind)
	if int64(len(data)) > maxBytes {
		return Asset{}, carphoto.Errorf(carphoto.EPayloadTooLarge, "the file is %d bytes; a %s asset may have at most %d", len(data), kind, maxBytes)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	ct, ok := contentTypes[format]
	if err != nil || !ok {
		return Asset{}, carphoto.Errorf(carphoto.EInvalidParams, "file must be a PNG, JPEG or WebP image")
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > maxPixels {
		return Asset{}, carphoto.Errorf(carphoto.EInvalidParams, "the image is %d×%d pixels; a %s asset may have at most %d pixels", cfg.Width, cfg.Height, kind, maxPixels)
	}
	a := Asset{
		ID: newID("asset"), Kind: kind, Name: assetName(filename), ContentType: ct, Bytes: int64(len(data)),
		Width: cfg.Width, Height: cfg.Height, CreatedAt: s.now().UTC().Truncate(time.Millisecond),
	}
	ok1, err := addAssetScript.Run(ctx, s.rdb, []string{assetsKey(accountID), assetKey(accountID, a.ID)},
		s.cfg.MaxAssets, unixMS(a.CreatedAt), a.ID,
		"account", accountID, "kind", a.Kind, "name", a.Name, "content_type", a.ContentType, "bytes", a.Bytes,
		"width", a.Width, "height", a.Height, "created_at", unixMS(a.CreatedAt), "data", data,
	).Int()
	if err != nil {
		return Asset{}, storeErr("save asset", err)
	}
	if ok1 == 0 {
		return Asset{}, carphoto.Errorf(carphoto.EAssetLimitReached, "the Assets library holds at most %d assets; delete one first", s.cfg.MaxAssets)
	}
	return a, nil
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

// deleteAssetScript deletes an asset if it belongs to the account:
// KEYS[1] cp:assets:{account}, KEYS[2] cp:asset:{account}:{asset}; ARGV account id,
// asset id. It returns 1, or 0 when there was nothing of the account's.
var deleteAssetScript = redis.NewScript(`
if redis.call('HGET', KEYS[2], 'account') ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[2])
redis.call('ZREM', KEYS[1], ARGV[2])
return 1
`)

// DeleteAsset removes an asset of the account; ENotFound like Asset.
func (s *Service) DeleteAsset(ctx context.Context, accountID, assetID string) error {
	if !validID(assetID) {
		return errNoAsset(assetID)
	}
	n, err := deleteAssetScript.Run(ctx, s.rdb, []string{assetsKey(accountID), assetKey(accountID, assetID)}, accountID, assetID).Int()
	if err != nil {
		return storeErr("delete asset", err)
	}
	if n == 0 {
		return errNoAsset(assetID)
	}
	return nil
}

// AssetData returns the bytes of an asset of the account of kind, for a
// call's logoAssetId (AssetDesign) or backgroundAssetId (AssetBackdrop).
// An unknown id and another account's id are the same EInvalidParams: the
// request named an asset the caller does not have; an asset of the other
// kind is EInvalidParams too, saying which kind it is.
func (s *Service) AssetData(ctx context.Context, accountID, assetID, kind string) ([]byte, error) {
	field := kindField(kind)
	bad := carphoto.Errorf(carphoto.EInvalidParams, "%s %q is not in your Assets library", field, assetID)
	if !validID(assetID) {
		return nil, bad
	}
	v, err := s.rdb.HMGet(ctx, assetKey(accountID, assetID), "account", "data", "kind").Result()
	if err != nil {
		return nil, storeErr("read asset", err)
	}
	owner, _ := v[0].(string)
	data, _ := v[1].(string)
	stored, _ := v[2].(string)
	if owner != accountID || data == "" {
		return nil, bad
	}
	if got := kindOf(stored); got != kind {
		return nil, carphoto.Errorf(carphoto.EInvalidParams,
			"%s %q is a %s asset, not a %s: name it in %s, or save the image again with kind=%s", field, assetID, got, kind, kindField(got), kind)
	}
	return []byte(data), nil
}

package billing

import (
	"time"

	"github.com/rs/zerolog"

	"carphoto/imageops"
	"carphoto/objstore"
)

// Config sets prices and limits. Zero fields take the defaults below.
type Config struct {
	// CostPerOp maps an operation name ("blur-plates", "plate-logo",
	// "car-shadow") to its price in credits; operations not listed cost
	// DefaultCost (Price).
	CostPerOp   map[string]int64
	DefaultCost int64 // default 1
	// VideoCostPer10s is video-blur's price per started 10 seconds of
	// video (VideoPrice); default DefaultCost.
	VideoCostPer10s int64

	RateLimitPerMinute int // per API key; default 60

	// MaxInFlightPerKey caps the photo requests one API key has running at
	// once, across web processes (Enter). Default 4.
	MaxInFlightPerKey int
	// InFlightTTL is the longest a request counts against that cap, should
	// its web process die before Leave. It must outlast the longest request
	// (REQUEST_TIMEOUT plus a margin). Default 1 minute.
	InFlightTTL time.Duration

	// AuthFailuresPerMinute is how many failed authentications (a missing
	// or wrong API key or admin token) one client address may make a
	// minute (GCRA: a burst of it, then one every minute/it). Default 30.
	AuthFailuresPerMinute int

	// AdminRateLimitPerMinute is the admin API's budget, shared by every
	// caller with the admin token. Default 300.
	AdminRateLimitPerMinute int

	// HoldTTL is how long an uncaptured hold lives before Run returns it to
	// the balance. It must outlast the longest request (REQUEST_TIMEOUT plus
	// a margin for clock skew between web processes). Default 5 minutes.
	HoldTTL time.Duration
	// ReapInterval is how often Run looks for expired holds. Default 30 s.
	ReapInterval time.Duration

	MaxAssetBytes  int64 // per asset; default 5 MB
	MaxAssets      int   // per account; default 100
	MaxAssetPixels int   // width × height of one design asset; default 25 megapixels
	// MaxBackdropBytes and MaxBackdropPixels bound a backdrop asset
	// (AssetBackdrop): a studio photo is larger than a plate design, and
	// every call that uses it decodes it in full. Defaults 15 MB and
	// 16 megapixels.
	MaxBackdropBytes  int64
	MaxBackdropPixels int
	// MaxAssetStorageBytes caps the bytes of one account's assets
	// together. Default 512 MiB.
	MaxAssetStorageBytes int64
	// Assets is the store that holds the assets' images; Redis keeps
	// their records only. Without it no asset can be saved.
	Assets objstore.Store

	// LedgerMax caps each account's ledger stream (approximately, to keep
	// trimming cheap). Default 10000 entries.
	LedgerMax int64

	// WaitReplicas is how many replicas must confirm a money write (hold,
	// capture, release, expiry, credits, keys) before it counts: WAIT on
	// the write's connection. 0, for one Redis without replicas, waits for
	// none. A master with fewer replicas connected (a shard after a
	// failover) has its writes accepted, with a warning.
	WaitReplicas int
	// WaitTimeout bounds each WAIT. Default 1 s.
	WaitTimeout time.Duration

	// Log receives what Run cannot return (a failed sweep is retried on the
	// next tick). The zero Logger discards.
	Log zerolog.Logger
}

// Defaults used for zero Config fields.
const (
	DefaultCost           = 1
	DefaultRatePerMinute  = 60
	DefaultMaxInFlight    = 4
	DefaultInFlightTTL    = time.Minute
	DefaultAdminRate      = 300
	DefaultAuthFailures   = 30
	DefaultHoldTTL        = 5 * time.Minute
	DefaultReapInterval   = 30 * time.Second
	DefaultMaxAssetBytes  = 5 << 20
	DefaultMaxAssets      = 100
	DefaultMaxAssetPixels = 25_000_000
	// DefaultMaxBackdropBytes and DefaultMaxBackdropPixels: the largest
	// backdrop car-shadow and car-cutout take (imageops.MaxCanvasPixels,
	// 16 MP); such a studio JPEG at a good quality fits in 15 MB.
	DefaultMaxBackdropBytes  = 15 << 20
	DefaultMaxBackdropPixels = imageops.MaxCanvasPixels
	DefaultLedgerMax         = 10000
	// DefaultMaxAssetStorageBytes is 100 designs of 5 MB, or 34 backdrops
	// of 15 MB.
	DefaultMaxAssetStorageBytes = 512 << 20
)

func (c Config) withDefaults() Config {
	if c.DefaultCost <= 0 {
		c.DefaultCost = DefaultCost
	}
	if c.VideoCostPer10s <= 0 {
		c.VideoCostPer10s = c.DefaultCost
	}
	if c.RateLimitPerMinute <= 0 {
		c.RateLimitPerMinute = DefaultRatePerMinute
	}
	if c.MaxInFlightPerKey <= 0 {
		c.MaxInFlightPerKey = DefaultMaxInFlight
	}
	if c.InFlightTTL <= 0 {
		c.InFlightTTL = DefaultInFlightTTL
	}
	if c.AuthFailuresPerMinute <= 0 {
		c.AuthFailuresPerMinute = DefaultAuthFailures
	}
	if c.AdminRateLimitPerMinute <= 0 {
		c.AdminRateLimitPerMinute = DefaultAdminRate
	}
	if c.HoldTTL <= 0 {
		c.HoldTTL = DefaultHoldTTL
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = DefaultReapInterval
	}
	if c.MaxAssetBytes <= 0 {
		c.MaxAssetBytes = DefaultMaxAssetBytes
	}
	if c.MaxAssets <= 0 {
		c.MaxAssets = DefaultMaxAssets
	}
	if c.MaxAssetPixels <= 0 {
		c.MaxAssetPixels = DefaultMaxAssetPixels
	}
	if c.WaitTimeout <= 0 {
		c.WaitTimeout = time.Second
	}
	if c.MaxBackdropBytes <= 0 {
		c.MaxBackdropBytes = DefaultMaxBackdropBytes
	}
	if c.MaxBackdropPixels <= 0 {
		c.MaxBackdropPixels = DefaultMaxBackdropPixels
	}
	if c.MaxAssetStorageBytes <= 0 {
		c.MaxAssetStorageBytes = DefaultMaxAssetStorageBytes
	}
	if c.LedgerMax <= 0 {
		c.LedgerMax = DefaultLedgerMax
	}
	return c
}

package service

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"carphoto/billing"
	"carphoto/imageops"
	"carphoto/internal/redisha"
	"carphoto/jobs"
	"carphoto/objstore"
	"carphoto/server"
	"carphoto/video"
	"carphoto/worker"
)

// Config is every setting of the service, read from the environment in one
// place. Each field's env name and default are in loadConfig and the README.
type Config struct {
	Port string
	// Host is HOST, the address the web side listens on; empty: every
	// interface, or loopback only in the zero-setup mode (listenWeb).
	Host     string
	RedisURL string
	// RedisClusterURL is REDIS_CLUSTER_URL: a Redis Cluster instead of the
	// one Redis of REDIS_URL (never both).
	RedisClusterURL string
	// RedisWaitReplicas and RedisWaitTimeout: a money write waits for this
	// many replicas (WAIT), this long at most. Default 1 on a cluster, 0
	// on one Redis.
	RedisWaitReplicas int
	RedisWaitTimeout  time.Duration

	RequestTimeout    time.Duration
	UploadTimeout     time.Duration
	IdempotencyTTL    time.Duration
	ShutdownTimeout   time.Duration
	MaxUploadBytes    int64
	MaxPixels         int
	MaxImageSide      int
	MaxImageAspect    int
	TaskCheckInterval time.Duration
	RedisPoolSize     int

	WorkerConcurrency     int
	WorkerShutdownTimeout time.Duration
	// Heartbeat is HEARTBEAT_INTERVAL: how often a worker process, and
	// each photo task it runs, refreshes its sign of life in Redis, and
	// how often a waiting web process looks at it; a worker that dies at
	// a task is noticed within 4 of them. The same on web and workers.
	Heartbeat time.Duration
	// HoldSweepInterval is HOLD_SWEEP_INTERVAL: how often a web process
	// returns the credits of holds past their time (a web process that
	// died mid-call leaves them).
	HoldSweepInterval time.Duration

	RateLimitPerMinute      int
	MaxInFlightPerKey       int
	AdminRateLimitPerMinute int
	AuthFailuresPerMinute   int
	CreditCost              int64
	// OpCosts are the operations' prices, each CREDIT_COST_<OP> (the op's
	// name in capitals, - as _), CREDIT_COST by default.
	OpCosts              map[string]int64
	MaxAssetBytes        int64
	MaxAssets            int
	MaxBackdropBytes     int64
	MaxBackdropPixels    int
	MaxAssetStorageBytes int64
	AssetCacheBytes      int64 // a worker's cache of assets' images
	AdminToken           string
	LogLevel             string

	// Store is the object store (OBJECT_STORE, or its old names VIDEO_STORE
	// and VIDEO_DIR): a directory, or an S3 bucket with S3_ENDPOINT and
	// AWS_*; videos and assets each under a name of their own.
	Store                  objstore.Location
	StoreDefault           bool // no store set: the directory under $TMPDIR
	MaxVideoBytes          int64
	MaxVideoSeconds        int64
	MaxVideoFramePixels    int64
	MaxVideoPixels         int64
	VideoCostPer10s        int64
	VideoUploadTimeout     time.Duration
	VideoJobTimeout        time.Duration
	VideoResultTTL         time.Duration
	VideoWorkerConcurrency int
	WebhookSecret          string
	// AllowPrivateURLs lets webhooks, imageUrl and logoUrl reach loopback,
	// private and reserved addresses: ALLOW_PRIVATE_URLS, or its older
	// name WEBHOOK_ALLOW_PRIVATE (development and tests only).
	AllowPrivateURLs bool

	MetricsToken string // bearer token /metrics needs; empty = open
	MetricsPort  string // worker's own /metrics port; empty = none
	MetricsHost  string // the address the worker's /metrics listens on
	// CORSOrigins are the origins whose pages may call the API (CORS_ORIGINS).
	CORSOrigins []string
}

// LoadConfig reads the environment through getenv. Every malformed variable
// is named in one joined error, so a bad deploy is fixed in one go.
func LoadConfig(getenv func(string) string) (Config, error) {
	var errs []error
	str := func(name, def string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		return def
	}
	dur := func(name string, def, lo time.Duration) time.Duration {
		v := getenv(name)
		if v == "" {
			return def
		}
		d, err := time.ParseDuration(v)
		if err != nil || d < lo {
			errs = append(errs, fmt.Errorf("%s=%q: want a duration of at least %v, like %v", name, v, lo, def))
			return def
		}
		return d
	}
	num := func(name string, def, lo int64) int64 {
		v := getenv(name)
		if v == "" {
			return def
		}
		n, err := strconv.ParseInt(strings.ReplaceAll(v, "_", ""), 10, 64)
		if err != nil || n < lo {
			errs = append(errs, fmt.Errorf("%s=%q: want an integer of at least %d", name, v, lo))
			return def
		}
		return n
	}

	c := Config{
		Port:                    str("PORT", "8080"),
		Host:                    str("HOST", ""),
		RedisURL:                str("REDIS_URL", ""),
		RequestTimeout:          dur("REQUEST_TIMEOUT", 30*time.Second, time.Second),
		MaxUploadBytes:          num("MAX_UPLOAD_BYTES", 25<<20, 1024),
		MaxPixels:               int(num("MAX_PIXELS", imageops.DefaultMaxPixels, 1)),
		MaxImageSide:            int(num("MAX_IMAGE_SIDE", imageops.DefaultMaxSide, 16)),
		MaxImageAspect:          int(num("MAX_IMAGE_ASPECT", imageops.DefaultMaxAspect, 1)),
		TaskCheckInterval:       dur("TASK_CHECK_INTERVAL", 20*time.Millisecond, time.Millisecond),
		RedisPoolSize:           int(num("REDIS_POOL_SIZE", 256, 20)),
		WorkerConcurrency:       int(num("WORKER_CONCURRENCY", int64(runtime.GOMAXPROCS(0)), 1)),
		WorkerShutdownTimeout:   dur("WORKER_SHUTDOWN_TIMEOUT", 20*time.Second, 0),
		RateLimitPerMinute:      int(num("RATE_LIMIT_PER_MINUTE", 60, 1)),
		MaxInFlightPerKey:       int(num("MAX_IN_FLIGHT_PER_KEY", 4, 1)),
		AdminRateLimitPerMinute: int(num("ADMIN_RATE_LIMIT_PER_MINUTE", 300, 1)),
		AuthFailuresPerMinute:   int(num("AUTH_FAILURES_PER_MINUTE", 30, 1)),
		CreditCost:              num("CREDIT_COST", 1, 1),
		MaxAssetBytes:           num("MAX_ASSET_BYTES", 5<<20, 1024),
		MaxAssets:               int(num("MAX_ASSETS", 100, 1)),
		MaxBackdropBytes:        num("MAX_BACKDROP_BYTES", billing.DefaultMaxBackdropBytes, 1024),
		MaxBackdropPixels:       int(num("MAX_BACKDROP_PIXELS", billing.DefaultMaxBackdropPixels, 1)),
		AdminToken:              getenv("ADMIN_TOKEN"),
		LogLevel:                str("LOG_LEVEL", "info"),
		MetricsToken:            getenv("METRICS_TOKEN"),
		MetricsPort:             str("METRICS_PORT", ""),
		MetricsHost:             str("METRICS_HOST", "127.0.0.1"),
	}
	if c.MaxBackdropPixels > imageops.MaxCanvasPixels {
		errs = append(errs, fmt.Errorf("MAX_BACKDROP_PIXELS=%d: want at most %d, the largest answer car-shadow and car-cutout give", c.MaxBackdropPixels, imageops.MaxCanvasPixels))
	}
	c.IdempotencyTTL = dur("IDEMPOTENCY_TTL", 10*time.Minute, time.Second)
	c.Heartbeat = dur("HEARTBEAT_INTERVAL", jobs.DefaultHeartbeat, 10*time.Millisecond)
	c.HoldSweepInterval = dur("HOLD_SWEEP_INTERVAL", billing.DefaultReapInterval, 100*time.Millisecond)
	var storeErr error
	c.Store, c.StoreDefault, storeErr = storeConfig(getenv)
	errs = append(errs, storeErr)
	c.MaxAssetStorageBytes = num("MAX_ASSET_STORAGE_BYTES", billing.DefaultMaxAssetStorageBytes, 1024)
	c.AssetCacheBytes = num("ASSET_CACHE_BYTES", 128<<20, 0)
	c.MaxVideoBytes = num("MAX_VIDEO_BYTES", 500<<20, 1024)
	c.MaxVideoSeconds = num("MAX_VIDEO_SECONDS", 180, 1)
	c.MaxVideoFramePixels = num("MAX_VIDEO_FRAME_PIXELS", 4096*2160, 1024)
	c.MaxVideoPixels = num("MAX_VIDEO_PIXELS", 48_000_000_000, 1<<20)
	c.VideoCostPer10s = num("VIDEO_CREDIT_COST_PER_10S", c.CreditCost, 1)
	c.OpCosts = map[string]int64{}
	for _, op := range imageops.Ops {
		c.OpCosts[string(op)] = num(opCostVar(op), c.CreditCost, 1)
	}
	c.VideoUploadTimeout = dur("VIDEO_UPLOAD_TIMEOUT", 10*time.Minute, time.Second)
	c.VideoJobTimeout = dur("VIDEO_JOB_TIMEOUT", 30*time.Minute, time.Second)
	c.VideoResultTTL = dur("VIDEO_RESULT_TTL", 24*time.Hour, time.Minute)
	c.VideoWorkerConcurrency = int(num("VIDEO_WORKER_CONCURRENCY", 1, 1))
	c.WebhookSecret = getenv("WEBHOOK_SECRET")
	for _, name := range []string{"ALLOW_PRIVATE_URLS", "WEBHOOK_ALLOW_PRIVATE"} {
		switch v := getenv(name); v {
		case "", "false":
		case "true":
			c.AllowPrivateURLs = true
		default:
			errs = append(errs, fmt.Errorf("%s=%q: want true or false", name, v))
		}
	}
	var corsErr error
	c.CORSOrigins, corsErr = corsOrigins(getenv("CORS_ORIGINS"))
	errs = append(errs, corsErr)
	if c.WebhookSecret != "" && len(c.WebhookSecret) < 16 {
		errs = append(errs, errors.New("WEBHOOK_SECRET: use at least 16 characters"))
	}
	c.ShutdownTimeout = dur("SHUTDOWN_TIMEOUT", c.RequestTimeout+5*time.Second, 0)
	// An upload gets at most a third of the request's time by default, so
	// a slow one is told so while there would still be time for the work.
	c.UploadTimeout = dur("UPLOAD_TIMEOUT", min(10*time.Second, c.RequestTimeout/3), 100*time.Millisecond)
	if c.UploadTimeout >= c.RequestTimeout {
		errs = append(errs, fmt.Errorf("UPLOAD_TIMEOUT=%v: want less than REQUEST_TIMEOUT (%v), leaving time for the work", c.UploadTimeout, c.RequestTimeout))
	}
	if _, err := strconv.Atoi(c.Port); err != nil {
		errs = append(errs, fmt.Errorf("PORT=%q: want a port number", c.Port))
	}
	if c.Host != "" {
		if _, err := netip.ParseAddr(c.Host); err != nil {
			errs = append(errs, fmt.Errorf("HOST=%q: want an IP address to listen on (0.0.0.0 or :: for every interface, 127.0.0.1 for this machine only)", c.Host))
		}
	}
	if c.RedisURL != "" {
		if _, err := redis.ParseURL(c.RedisURL); err != nil {
			errs = append(errs, fmt.Errorf("REDIS_URL: %v (want redis://[user:pass@]host:port[/db] or rediss://...)", err))
		}
	}
	c.RedisClusterURL = str("REDIS_CLUSTER_URL", "")
	waitDefault := int64(0)
	if c.RedisClusterURL != "" {
		waitDefault = 1
		if c.RedisURL != "" {
			errs = append(errs, errors.New("REDIS_URL and REDIS_CLUSTER_URL are both set: keep one (REDIS_URL for one Redis, REDIS_CLUSTER_URL for a Redis Cluster)"))
		}
		if _, err := redis.ParseClusterURL(c.RedisClusterURL); err != nil {
			errs = append(errs, fmt.Errorf("REDIS_CLUSTER_URL: %v (want redis://[user:pass@]host:port?addr=host:port&addr=host:port, or rediss://...)", err))
		}
	}
	c.RedisWaitReplicas = int(num("REDIS_WAIT_REPLICAS", waitDefault, 0))
	c.RedisWaitTimeout = dur("REDIS_WAIT_TIMEOUT", time.Second, time.Millisecond)
	if c.MetricsPort != "" {
		if _, err := strconv.Atoi(c.MetricsPort); err != nil {
			errs = append(errs, fmt.Errorf("METRICS_PORT=%q: want a port number", c.MetricsPort))
		}
	}
	if _, err := netip.ParseAddr(c.MetricsHost); err != nil {
		errs = append(errs, fmt.Errorf("METRICS_HOST=%q: want an IP address to listen on (127.0.0.1, or 0.0.0.0 for every interface)", c.MetricsHost))
	}
	if c.MetricsToken != "" && len(c.MetricsToken) < 16 {
		errs = append(errs, errors.New("METRICS_TOKEN: use at least 16 characters"))
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		errs = append(errs, errors.New("ADMIN_TOKEN: use at least 16 characters"))
	}
	return c, errors.Join(errs...)
}

// storeNames are the settings that name the object store: OBJECT_STORE,
// and the names it had when it kept videos only.
var storeNames = []string{"OBJECT_STORE", "VIDEO_STORE", "VIDEO_DIR"}

// storeConfig reads the object store's setting: OBJECT_STORE (or
// VIDEO_STORE, or VIDEO_DIR), a directory or s3://bucket[/prefix]; unset,
// a directory under $TMPDIR (def).
func storeConfig(getenv func(string) string) (loc objstore.Location, def bool, err error) {
	var name, val string
	var set []string
	for _, n := range storeNames {
		if v := strings.TrimSpace(getenv(n)); v != "" {
			set = append(set, n)
			if name == "" {
				name, val = n, v
			}
		}
	}
	switch {
	case len(set) > 1:
		return loc, false, fmt.Errorf("%s are set together: keep one, OBJECT_STORE (a directory on one machine's disk, s3://bucket/prefix for processes on several machines); VIDEO_STORE and VIDEO_DIR are its old names", strings.Join(set, " and "))
	case name == "":
		return objstore.Location{Dir: filepath.Join(os.TempDir(), "carphoto-store")}, true, nil
	case name == "VIDEO_DIR" || !strings.Contains(val, "://"):
		return objstore.Location{Dir: val}, false, nil
	}
	s3, err := s3Config(name, val, getenv)
	return objstore.Location{S3: &s3}, false, err
}

// s3Config reads name=s3://bucket[/prefix] and the variables every S3
// client knows: S3_ENDPOINT (a server other than AWS, addressed
// path-style; the only way to allow plain http), AWS_REGION,
// AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN.
func s3Config(name, store string, getenv func(string) string) (objstore.S3Config, error) {
	var errs []error
	var c objstore.S3Config
	u, err := url.Parse(store)
	switch {
	case err != nil || u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "":
		errs = append(errs, fmt.Errorf("%s=%q: want a directory, s3://bucket or s3://bucket/prefix", name, store))
	case !validBucket(u.Host):
		errs = append(errs, fmt.Errorf("%s=%q: %q is not a bucket name (3-63 lowercase letters, digits, dots, hyphens)", name, store, u.Host))
	default:
		c.Bucket, c.Prefix = u.Host, strings.Trim(u.Path, "/")
	}
	c.Endpoint = strings.TrimSpace(getenv("S3_ENDPOINT"))
	if c.Endpoint != "" {
		e, err := url.Parse(c.Endpoint)
		if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" || e.User != nil || strings.Trim(e.Path, "/") != "" || e.RawQuery != "" {
			errs = append(errs, fmt.Errorf("S3_ENDPOINT=%q: want https://host[:port] (or http:// on a private network)", c.Endpoint))
		}
	}
	c.Region = strings.TrimSpace(getenv("AWS_REGION"))
	if c.Region == "" {
		c.Region = strings.TrimSpace(getenv("AWS_DEFAULT_REGION"))
	}
	c.AccessKey, c.SecretKey = getenv("AWS_ACCESS_KEY_ID"), getenv("AWS_SECRET_ACCESS_KEY")
	c.SessionToken = getenv("AWS_SESSION_TOKEN")
	if c.AccessKey == "" || c.SecretKey == "" {
		errs = append(errs, fmt.Errorf("%s=%q needs AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY", name, store))
	}
	return c, errors.Join(errs...)
}

// validBucket reports whether name is an S3 bucket name.
func validBucket(name string) bool {
	if len(name) < 3 || len(name) > 63 || strings.Contains(name, "..") {
		return false
	}
	for i, r := range name {
		edge := i == 0 || i == len(name)-1
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case (r == '-' || r == '.') && !edge:
		default:
			return false
		}
	}
	return true
}

// openStore opens the object store's part name (objstore.Videos,
// objstore.Assets), checking that the bucket is there.
func (c Config) openStore(ctx context.Context, name string) (objstore.Store, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	return c.Store.Open(ctx, name)
}

// redisOptions turns REDIS_URL into client options sized for the service:
// every request waiting on a result holds one connection in BLPOP.
func (c Config) redisOptions(url string) (*redis.Options, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	opt.PoolSize = c.RedisPoolSize
	opt.ContextTimeoutEnabled = true
	// A request waits for a free connection rather than failing fast: its
	// own deadline bounds the wait.
	opt.PoolTimeout = c.RequestTimeout
	return opt, nil
}

// redisClient opens the service's Redis: the cluster of REDIS_CLUSTER_URL
// when set, else the one Redis at url (REDIS_URL, or the embedded one).
// addr names it in logs and errors, without secrets.
func (c Config) redisClient(url string) (rdb redis.UniversalClient, addr string, err error) {
	if c.RedisClusterURL == "" {
		opt, err := c.redisOptions(url)
		if err != nil {
			return nil, "", err
		}
		return redis.NewClient(opt), opt.Addr, nil
	}
	opt, err := redis.ParseClusterURL(c.RedisClusterURL)
	if err != nil {
		return nil, "", fmt.Errorf("REDIS_CLUSTER_URL: %w", err)
	}
	// The pool is per node: a request waits on the node of its result key.
	opt.PoolSize = c.RedisPoolSize
	opt.ContextTimeoutEnabled = true
	opt.PoolTimeout = c.RequestTimeout
	cc := redis.NewClusterClient(opt)
	redisha.Heal(cc)
	return cc, "cluster " + strings.Join(opt.Addrs, ","), nil
}

// redisConfigured reports whether REDIS_URL or REDIS_CLUSTER_URL is set.
func (c Config) redisConfigured() bool { return c.RedisURL != "" || c.RedisClusterURL != "" }

func (c Config) serverConfig() server.Config {
	return server.Config{
		RequestTimeout:    c.RequestTimeout,
		UploadTimeout:     c.UploadTimeout,
		IdempotencyTTL:    c.IdempotencyTTL,
		MaxUploadBytes:    c.MaxUploadBytes,
		AllowPrivateURLs:  c.AllowPrivateURLs,
		MaxPixels:         c.MaxPixels,
		MaxBackdropPixels: c.MaxBackdropPixels,
		MaxSide:           c.MaxImageSide,
		MaxAspect:         float64(c.MaxImageAspect),
		AdminToken:        c.AdminToken,
		HoldTTL:           c.holdTTL(),
		MetricsToken:      c.MetricsToken,
		CORSOrigins:       c.CORSOrigins,
		// Leave connections for billing, rate limits and enqueueing.
		MaxInFlight: max(c.RedisPoolSize-16, 1),
	}
}

// corsOrigins reads CORS_ORIGINS: origins separated by commas or spaces,
// each scheme://host[:port] as a browser sends it in Origin (http or https,
// no path, no trailing slash); "*" is refused, since a page that calls the
// API holds a key.
func corsOrigins(v string) ([]string, error) {
	var origins []string
	var errs []error
	for _, o := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' }) {
		u, err := url.Parse(o)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" ||
			u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ToLower(o) != o {
			errs = append(errs, fmt.Errorf("CORS_ORIGINS: %q is not an origin; want scheme://host[:port] in lower case, like https://dealer.example.com", o))
			continue
		}
		origins = append(origins, o)
	}
	return origins, errors.Join(errs...)
}

// opCostVar is the environment variable that prices op: CREDIT_COST_BLUR_PLATES
// for blur-plates.
func opCostVar(op imageops.Op) string {
	return "CREDIT_COST_" + strings.ToUpper(strings.ReplaceAll(string(op), "-", "_"))
}

// videoConfig is the web side's share of video jobs on store.
func (c Config) videoConfig(store objstore.Store) server.VideoConfig {
	return server.VideoConfig{
		Store: store, Notifier: c.notifier(),
		MaxBytes: c.MaxVideoBytes, MaxSeconds: float64(c.MaxVideoSeconds),
		MaxFramePixels: int(c.MaxVideoFramePixels), MaxPixels: c.MaxVideoPixels,
		UploadTimeout: c.VideoUploadTimeout, JobTimeout: c.VideoJobTimeout, Retries: videoRetries, ResultTTL: c.VideoResultTTL,
	}
}

// videoRetries is how many times a video job is run again after a run
// that failed or whose worker process died during it: once, so that a
// video that kills every worker it touches takes down two at most and
// then ends failed, uncharged.
const videoRetries = 1

// videoLimits are the bounds of a video, checked by the web before its
// job is queued and by the worker again before any frame is decoded.
func (c Config) videoLimits() video.Limits {
	return video.Limits{MaxSeconds: float64(c.MaxVideoSeconds), MaxFramePixels: int(c.MaxVideoFramePixels), MaxPixels: c.MaxVideoPixels}
}

func (c Config) notifier() video.Notifier {
	return video.Notifier{Secret: []byte(c.WebhookSecret), AllowPrivate: c.AllowPrivateURLs}
}

func (c Config) workerConfig() worker.Config {
	return worker.Config{
		Concurrency:       c.WorkerConcurrency,
		TaskCheckInterval: c.TaskCheckInterval,
		ShutdownTimeout:   c.WorkerShutdownTimeout,
		Heartbeat:         c.Heartbeat,
		MaxPixels:         c.MaxPixels,
		MaxSide:           c.MaxImageSide,
		MaxAspect:         float64(c.MaxImageAspect),
	}
}

// BillingConfig holds credits for a minute past the longest an answer may
// be written (holdTTL): long enough for any honest capture, short enough
// that a dead web process's holds come back within minutes.
func (c Config) BillingConfig(log zerolog.Logger) billing.Config {
	return billing.Config{
		Log:                log,
		DefaultCost:        c.CreditCost,
		CostPerOp:          c.OpCosts,
		VideoCostPer10s:    c.VideoCostPer10s,
		RateLimitPerMinute: c.RateLimitPerMinute,
		HoldTTL:            c.holdTTL(),
		ReapInterval:       c.HoldSweepInterval,
		// A count left by a web process that died lapses soon after the
		// longest request could have ended.
		MaxInFlightPerKey:       c.MaxInFlightPerKey,
		InFlightTTL:             c.RequestTimeout + 10*time.Second,
		AdminRateLimitPerMinute: c.AdminRateLimitPerMinute,
		AuthFailuresPerMinute:   c.AuthFailuresPerMinute,
		MaxAssetBytes:           c.MaxAssetBytes,
		MaxAssets:               c.MaxAssets,
		MaxBackdropBytes:        c.MaxBackdropBytes,
		MaxBackdropPixels:       c.MaxBackdropPixels,
		MaxAssetStorageBytes:    c.MaxAssetStorageBytes,
		WaitReplicas:            c.RedisWaitReplicas,
		WaitTimeout:             c.RedisWaitTimeout,
	}
}

// holdTTL is how long an uncaptured hold lives before billing's sweep
// returns it: well past any request's deadline and the longest its
// answer may then take to be read (server.AnswerWindowMost).
func (c Config) holdTTL() time.Duration {
	return c.RequestTimeout + server.AnswerWindowMost + time.Minute
}

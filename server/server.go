// Package server is carphoto's HTTP side: Echo routes that authenticate,
// rate-limit and validate a request, hold its credits, hand the photo to the
// queue and answer with the worker's result. It holds no image logic.
package server

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/labstack/echo/v4"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"carphoto/billing"
	"carphoto/idempotency"
	"carphoto/internal/netguard"
	"carphoto/jobs"
	"carphoto/metrics"
)

// Config is the web process's share of the service configuration.
type Config struct {
	RequestTimeout time.Duration // deadline of a photo request, upload included
	// UploadTimeout bounds the upload of a photo request, from its arrival;
	// a body still arriving then is answered 408 request_timeout. Zero
	// leaves only RequestTimeout.
	UploadTimeout time.Duration
	// IdempotencyTTL is how long the answer to a photo request sent with
	// an Idempotency-Key is kept for its retries; zero ignores the header.
	IdempotencyTTL time.Duration
	MaxUploadBytes int64 // cap on one uploaded file, or one fetched by URL
	// AllowPrivateURLs lets imageUrl and logoUrl reach loopback, private
	// and reserved addresses (development and tests only).
	AllowPrivateURLs bool
	// ZeroSetup is the all-in-one dev mode on an embedded Redis: a refused
	// private imageUrl then says how to allow it, and the try-it page
	// pre-fills DemoKey, the demo account's key, for loopback visitors.
	ZeroSetup bool
	DemoKey   string
	MaxPixels int // cap on width × height, checked from the header
	// MaxBackdropPixels caps a backdrop's width × height (an upload, a
	// URL or an asset; billing holds saved ones to the same figure).
	// Zero takes billing.DefaultMaxBackdropPixels.
	MaxBackdropPixels int
	// MaxSide and MaxAspect bound an image's shape from its header: each
	// side, and the longer side ÷ the shorter. Zero takes imageops' default.
	MaxSide    int
	MaxAspect  float64
	AdminToken string // enables /admin/v1 when set
	// HoldTTL is billing's hold lifetime: how long a release that failed
	// while Redis was out of reach is tried again in the background.
	HoldTTL time.Duration
	// MaxInFlight bounds the photo requests one web process works on at
	// once. Each waits on a Redis connection (BLPOP) and holds its upload
	// in memory, so it stays below the Redis pool size; requests beyond it
	// wait for a slot within their own deadline.
	MaxInFlight int
	// Video is video-blur's settings; its Store nil turns it off.
	Video VideoConfig
	// Metrics records every request and serves GET /metrics; nil leaves
	// both out. MetricsToken, when set, is the bearer token /metrics needs.
	Metrics      *metrics.Metrics
	MetricsToken string
	// CORSOrigins are the origins (scheme://host[:port]) whose pages may
	// call the API from a browser (cors.go); none by default.
	CORSOrigins []string
}

// Server is the HTTP API. Build it with New and serve Handler.
type Server struct {
	cfg     Config
	log     zerolog.Logger
	rdb     redis.UniversalClient
	billing *billing.Service
	jobs    *jobs.Client
	inspect *asynq.Inspector
	e       *echo.Echo
	slots   chan struct{} // one per photo request in flight
	// videoQueue enqueues video jobs.
	videoQueue *asynq.Client
	idem       *idempotency.Store
	// fetcher gets imageUrl and logoUrl through the address guard.
	fetcher *http.Client
	// pace, seeded, workers and preQueue are admission's (admission.go):
	// the workers' processing times seen, when the workers' published
	// pace was last read (unix ns), their concurrency last read, and the
	// calls admitted not queued yet.
	pace     jobs.Pace
	seeded   atomic.Int64
	workers  workersCache
	preQueue atomic.Int64
	// uploads is the memory budget of the uploads held (uploadmem.go).
	uploads *uploadBudget
	// served is every route's "METHOD /path" (allowed), made once.
	served     map[string]bool
	servedOnce sync.Once
}

// New wires the routes. rdb is the service's Redis; b and j are built on it.
func New(cfg Config, log zerolog.Logger, rdb redis.UniversalClient, b *billing.Service, j *jobs.Client) *Server {
	s := &Server{
		cfg: cfg, log: log, rdb: rdb, billing: b, jobs: j,
		inspect:    asynq.NewInspectorFromRedisClient(rdb),
		videoQueue: asynq.NewClientFromRedisClient(rdb),
		slots:      make(chan struct{}, max(cfg.MaxInFlight, 1)),
		// A claim outlives the longest request by a margin, then lapses.
		idem:    idempotency.New(rdb, cfg.IdempotencyTTL, cfg.RequestTimeout+AnswerWindowMost+10*time.Second),
		fetcher: newFetchClient(netguard.Guard{AllowPrivate: cfg.AllowPrivateURLs}),
		uploads: newUploadBudget(),
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	s.e = e
	s.routes()
	return s
}

// Handler returns the http.Handler serving every route.
func (s *Server) Handler() http.Handler { return s.e }

// ready reports whether Redis answers and a worker is up. Asynq lists only
// servers whose heartbeat (every 5 s) has not expired, so a listed, active
// server on the photo queue is a worker seen within seconds.
func (s *Server) ready(ctx context.Context) (bool, string) {
	if err := s.rdb.Ping(ctx).Err(); err != nil {
		return false, "redis unreachable"
	}
	servers, err := s.inspect.Servers()
	if err != nil {
		return false, "cannot list workers"
	}
	for _, w := range servers {
		if _, ok := w.Queues[jobs.Queue]; ok && w.Status == "active" {
			return true, "ok"
		}
	}
	return false, "no worker is running"
}

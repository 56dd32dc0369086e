// Package service is the carphoto binary's whole program (Run): its
// configuration from the environment, the web and worker sides wired
// together on Redis, the admin commands and the tools on photo files.
// cmd/carphoto's main only adds signals and the exit code; the end-to-end
// tests (cmd/carphoto/e2e/..., through internal/testenv/e2etest) run the
// same Run, in-process or as processes of their own.
package service

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"carphoto"
	"carphoto/billing"
	"carphoto/jobs"
	"carphoto/metrics"
	"carphoto/objstore"
	"carphoto/server"
	"carphoto/worker"
)

const usage = `usage: carphoto [command]

Service:
  carphoto [all]      web + worker in one process (embedded Redis when neither REDIS_URL nor REDIS_CLUSTER_URL is set)
  carphoto serve      web only (Procfile: web)
  carphoto worker     worker only (Procfile: worker)

Admin (against REDIS_URL or REDIS_CLUSTER_URL):
  carphoto accounts create [--credits N] [--name S]
  carphoto keys rotate|revoke ACCOUNT_ID
  carphoto credits add ACCOUNT_ID N | credits show ACCOUNT_ID
  carphoto migrate                       move keys of the layout before Redis Cluster support, and assets' images from Redis to the object store (serve does both at start)

Tools:
  carphoto plates [--json] FILE...       find licence plates
  carphoto cutout -o DIR FILE...         cut the car out to DIR/<name>.png

The benchmarks and vision measurements are carphoto-lab's (go run ./cmd/carphoto-lab help).
`

// Run is the whole program: main only adds signals and the exit code.
func Run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	cmd := "all"
	if len(args) > 0 {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "all", "serve", "worker":
		cfg, err := LoadConfig(getenv)
		if err != nil {
			return fmt.Errorf("configuration:\n%w", err)
		}
		return runService(ctx, cmd, cfg, stdout, stderr)
	case "accounts", "keys", "credits":
		return runAdmin(ctx, getenv, append([]string{cmd}, args...), stdout)
	case "migrate":
		return runMigrate(ctx, getenv, args, stdout)
	case "plates":
		return runPlates(ctx, args, stdout, stderr)
	case "cutout":
		return runCutout(ctx, args, stdout, stderr)
	case "help", "-h", "--help":
		_, err := io.WriteString(stdout, usage)
		return err
	}
	return fmt.Errorf("unknown command %q\n\n%s", cmd, usage)
}

// newLogger builds the one logger of the process: JSON lines on stderr.
func newLogger(level string, stderr io.Writer) zerolog.Logger {
	lvl, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil || lvl == zerolog.NoLevel {
		lvl = zerolog.InfoLevel
	}
	return zerolog.New(stderr).Level(lvl).With().Timestamp().Logger()
}

// runService runs the web side, the worker side, or both.
func runService(ctx context.Context, mode string, cfg Config, stdout, stderr io.Writer) error {
	log := newLogger(cfg.LogLevel, stderr).With().Str("process", mode).Logger()
	redisURL, embedded := cfg.RedisURL, false
	if !cfg.redisConfigured() {
		if mode != "all" {
			return fmt.Errorf("%s needs REDIS_URL (redis://host:port) or REDIS_CLUSTER_URL; run `carphoto` alone for the all-in-one dev mode", mode)
		}
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true) // without it TTLs never run down
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return fmt.Errorf("start embedded redis: %w", err)
		}
		defer m.Close()
		redisURL, embedded = "redis://"+m.Addr(), true
	}
	rdb, redisAddr, err := cfg.redisClient(redisURL)
	if err != nil {
		return err
	}
	defer rdb.Close()
	m := metrics.New()
	rdb.AddHook(m.RedisHook())
	if err := rdb.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w", redisAddr, err)
	}
	log.Info().Str("redis", redisAddr).Bool("embedded_redis", embedded).
		Int("redis_wait_replicas", cfg.RedisWaitReplicas).Dur("redis_wait_timeout", cfg.RedisWaitTimeout).
		Dur("request_timeout", cfg.RequestTimeout).Dur("upload_timeout", cfg.UploadTimeout).Dur("idempotency_ttl", cfg.IdempotencyTTL).
		Int64("max_upload_bytes", cfg.MaxUploadBytes).Bool("allow_private_urls", cfg.AllowPrivateURLs).
		Int("max_pixels", cfg.MaxPixels).Int("max_image_side", cfg.MaxImageSide).Int("max_image_aspect", cfg.MaxImageAspect).Dur("task_check_interval", cfg.TaskCheckInterval).
		Dur("heartbeat_interval", cfg.Heartbeat).Dur("hold_sweep_interval", cfg.HoldSweepInterval).
		Int("redis_pool_size", cfg.RedisPoolSize).Int("worker_concurrency", cfg.WorkerConcurrency).
		Int("rate_limit_per_minute", cfg.RateLimitPerMinute).Int("max_in_flight_per_key", cfg.MaxInFlightPerKey).
		Int("admin_rate_limit_per_minute", cfg.AdminRateLimitPerMinute).Int("auth_failures_per_minute", cfg.AuthFailuresPerMinute).Bool("admin_api", cfg.AdminToken != "").
		Bool("metrics_token", cfg.MetricsToken != "").Str("metrics_port", cfg.MetricsPort).Str("metrics_host", cfg.MetricsHost).
		Int64("max_video_seconds", cfg.MaxVideoSeconds).Int64("max_video_frame_pixels", cfg.MaxVideoFramePixels).
		Int64("max_video_pixels", cfg.MaxVideoPixels).
		Str("object_store", cfg.Store.String()).Int64("max_asset_storage_bytes", cfg.MaxAssetStorageBytes).
		Int64("asset_cache_bytes", cfg.AssetCacheBytes).
		Msg("configuration")
	if cfg.StoreDefault && !embedded {
		log.Warn().Str("object_store", cfg.Store.String()).
			Msg("OBJECT_STORE is not set: saved assets are kept under the temporary directory; set OBJECT_STORE to a lasting directory or an s3:// bucket")
	}

	if mode != "worker" {
		if err := migrateLayout(ctx, rdb, log); err != nil {
			return err
		}
	}
	store, err := cfg.openStore(ctx, objstore.Videos)
	if err != nil {
		return err
	}
	assets, err := cfg.openStore(ctx, objstore.Assets)
	if err != nil {
		return err
	}
	g, ctx := errgroup.WithContext(ctx)
	bc := cfg.BillingConfig(log)
	bc.Assets = assets
	b := billing.New(rdb, bc)
	if mode != "worker" {
		if err := migrateAssets(ctx, b, log); err != nil {
			return err
		}
	}
	if mode != "worker" {
		lns, addr, err := listenWeb(cfg.Host, cfg.Port, embedded)
		if err != nil {
			return err
		}
		demoKey := ""
		if embedded {
			if demoKey, err = printDemo(ctx, b, addr, redisURL, stdout); err != nil {
				for _, ln := range lns {
					ln.Close()
				}
				return err
			}
		}
		fmt.Fprintf(stdout, "carphoto listening on %s\n", addr)
		g.Go(func() error { return b.Run(ctx) })
		m.Register(metrics.NewQueueCollector(asynq.NewInspectorFromRedisClient(rdb), jobs.Queue))
		g.Go(func() error { return serveHTTP(ctx, cfg, log, rdb, b, m, lns, store, demoKey) })
		g.Go(func() error { return sweepVideos(ctx, store, cfg.VideoResultTTL, log) })
	}
	if mode != "serve" {
		wc := cfg.workerConfig()
		wc.Metrics = m
		wc.Assets = objstore.NewCache(assets, cfg.AssetCacheBytes, max(cfg.MaxAssetBytes, cfg.MaxBackdropBytes))
		wc.Video = worker.VideoConfig{Concurrency: cfg.VideoWorkerConcurrency, Store: store, Billing: b,
			Notifier: cfg.notifier(), ResultTTL: cfg.VideoResultTTL, Limits: cfg.videoLimits()}
		w := worker.New(wc, log, rdb)
		g.Go(func() error { return w.Run(ctx) })
	}
	if mode == "worker" && cfg.MetricsPort != "" {
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.MetricsHost, cfg.MetricsPort))
		if err != nil {
			return fmt.Errorf("listen on METRICS_HOST %s, METRICS_PORT %s: %w", cfg.MetricsHost, cfg.MetricsPort, err)
		}
		fmt.Fprintf(stdout, "carphoto worker metrics on http://%s/metrics\n", ln.Addr())
		g.Go(func() error { return serveWorkerMetrics(ctx, cfg.MetricsToken, m, ln) })
	}
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// serveHTTP serves until ctx is done, then stops accepting and lets
// in-flight requests finish within ShutdownTimeout. demoKey is the
// zero-setup mode's demo key, empty in any other.
func serveHTTP(ctx context.Context, cfg Config, log zerolog.Logger, rdb redis.UniversalClient, b *billing.Service, m *metrics.Metrics, lns []net.Listener, store objstore.Store, demoKey string) error {
	jc := jobs.NewClient(rdb, cfg.Heartbeat)
	defer jc.Close()
	sc := cfg.serverConfig()
	sc.Metrics = m
	sc.Video = cfg.videoConfig(store)
	sc.ZeroSetup, sc.DemoKey = demoKey != "", demoKey
	srv := server.New(sc, log, rdb, b, jc)
	hs := &http.Server{
		Handler:           srv.Handler(),
		ConnContext:       server.ConnContext, // an answer is charged once the client acknowledged it
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       cfg.RequestTimeout,
		WriteTimeout:      cfg.RequestTimeout + 10*time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	errc := make(chan error, len(lns))
	for _, ln := range lns {
		go func() { errc <- hs.Serve(ln) }()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("http server: %w", err)
	case <-ctx.Done():
	}
	log.Info().Msg("web stopping: finishing in-flight requests")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("http shutdown: %w", err)
	}
	for range lns {
		if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	log.Info().Msg("web stopped")
	return nil
}

// listenWeb opens the web side's listeners and returns them with the
// address to print. HOST, when set, names the one address to listen on
// (0.0.0.0 or :: for every interface). Unset, the zero-setup mode listens
// on loopback only, 127.0.0.1 and ::1 (where the host has IPv6), so its
// demo key and its credits stay on this machine; a deployment (loopback
// false) listens on every interface, as it always has.
func listenWeb(host, port string, loopback bool) (lns []net.Listener, addr string, err error) {
	printed := func(ln net.Listener) string {
		p := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		if ip, err := netip.ParseAddr(host); err == nil && !ip.IsUnspecified() {
			return "http://" + net.JoinHostPort(ip.String(), p)
		}
		return "http://localhost:" + p
	}
	if host != "" || !loopback {
		ln, err := net.Listen("tcp", net.JoinHostPort(host, port))
		if err != nil {
			if host == "" {
				return nil, "", fmt.Errorf("listen on PORT %s: %w", port, err)
			}
			return nil, "", fmt.Errorf("listen on HOST %s, PORT %s: %w", host, port, err)
		}
		return []net.Listener{ln}, printed(ln), nil
	}
	// ::1 on the same port as 127.0.0.1 (PORT=0 picks it there first, and
	// picks again where ::1 has it taken). A host without IPv6 has no ::1:
	// 127.0.0.1 alone then. Another process on ::1's port would answer
	// "localhost" there: that stops the start.
	for try := 0; ; try++ {
		v4, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", port))
		if err != nil {
			return nil, "", fmt.Errorf("listen on 127.0.0.1, PORT %s: %w", port, err)
		}
		v6, err := net.Listen("tcp", net.JoinHostPort("::1", strconv.Itoa(v4.Addr().(*net.TCPAddr).Port)))
		switch {
		case err == nil:
			return []net.Listener{v4, v6}, printed(v4), nil
		case !errors.Is(err, syscall.EADDRINUSE):
			return []net.Listener{v4}, printed(v4), nil
		}
		v4.Close()
		if port != "0" || try == 10 {
			return nil, "", fmt.Errorf("listen on ::1, PORT %s: %w", port, err)
		}
	}
}

// sweepVideos deletes, every few minutes, video files older than their
// time to live: results nobody fetched, inputs of jobs long over.
func sweepVideos(ctx context.Context, store objstore.Store, ttl time.Duration, log zerolog.Logger) error {
	t := time.NewTicker(5 * time.Minute)
	defer t.Stop()
	for {
		if n, err := store.Sweep(ctx, time.Now().Add(-ttl-time.Hour)); err != nil && ctx.Err() == nil {
			log.Warn().Err(err).Msg("sweep video files")
		} else if n > 0 {
			log.Info().Int("files", n).Msg("swept expired video files")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// serveWorkerMetrics serves a worker's GET /metrics on its own listener
// (METRICS_PORT) until ctx is done.
func serveWorkerMetrics(ctx context.Context, token string, m *metrics.Metrics, ln net.Listener) error {
	mux := http.NewServeMux()
	h := m.Handler()
	mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		if !metrics.Authorized(r, token) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			json.NewEncoder(w).Encode(map[string]string{"error": metrics.Denied(token), "code": carphoto.EInvalidAPIKey})
			return
		}
		h.ServeHTTP(w, r)
	})
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("metrics server: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	return hs.Shutdown(sctx)
}

// printDemo creates the dev mode's demo account, shows how to call it and
// returns its key.
func printDemo(ctx context.Context, b *billing.Service, addr, redisURL string, stdout io.Writer) (string, error) {
	acct, key, err := b.CreateAccount(ctx, "demo", 100)
	if err != nil {
		return "", fmt.Errorf("create demo account: %w", err)
	}
	fmt.Fprintf(stdout, `carphoto dev mode: web + worker in one process on an embedded Redis.
Embedded Redis: %[3]s  (admin CLI: REDIS_URL=%[3]s go run ./cmd/carphoto credits show %[4]s)
Demo account %[4]s has %[5]d credits. From the repository's root, hide the plates of the sample photo:

  curl -sS --fail-with-body -X POST %[1]s/v1/blur-plates -H "Authorization: Bearer %[2]s" -F image=@docs/samples/car.jpg -o car-blurred.jpg

Replace the plate with the sample design, or add a shadow:

  curl -sS --fail-with-body -X POST %[1]s/v1/plate-logo -H "Authorization: Bearer %[2]s" -F image=@docs/samples/car.jpg -F logo=@docs/samples/plate-design.png -o car-logo.jpg
  curl -sS --fail-with-body -X POST %[1]s/v1/car-shadow -H "Authorization: Bearer %[2]s" -F image=@docs/samples/car.jpg -o car-shadow.png

Or stand the listing-size sample (4000×2672) in the sample studio, a 1600×1000 listing photo:

  curl -sS --fail-with-body -X POST %[1]s/v1/car-shadow -H "Authorization: Bearer %[2]s" -F image=@docs/samples/listing.jpg -F backgroundImage=@docs/samples/backdrop.jpg -o listing-studio.png

Or try every operation in a browser: %[1]s/ (opened on this machine, it has the demo key filled in)

`, addr, key, redisURL, acct.ID, acct.Credits)
	return key, nil
}

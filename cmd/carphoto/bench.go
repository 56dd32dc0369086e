package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"github.com/rs/zerolog"

	"carphoto/billing"
	"carphoto/cmd/carphoto/internal/bench"
	"carphoto/worker"
)

// runBenchService measures latency through the whole path, HTTP → queue →
// worker → response, and the queue's share of it: total minus the worker's
// processing time (from the Server-Timing header).
//
// Without --url it starts the service in this process (on REDIS_URL when
// set, else on an embedded Redis) with a funded account and no rate limit.
func runBenchService(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench service", flag.ContinueOnError)
	fs.SetOutput(stdout)
	url := fs.String("url", "", "base URL of a running service (default: start one in this process)")
	key := fs.String("key", "", "API key for --url")
	op := fs.String("op", "blur-plates", "operation to call")
	photo := fs.String("photo", "", "photo to send (required)")
	mp := fs.Float64("scale-to-mp", 0, "upscale the photo to this many megapixels first (e.g. 12)")
	n := fs.Int("n", 50, "requests to send")
	conc := fs.Int("c", 1, "concurrent clients")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *photo == "" {
		return errors.New("bench service: --photo FILE is required")
	}
	data, err := os.ReadFile(*photo)
	if err != nil {
		return err
	}
	if *mp > 0 {
		if data, err = bench.Enlarge(ctx, data, *mp); err != nil {
			return err
		}
	}
	if *url == "" {
		base, k, stop, err := startBenchService(ctx, getenv)
		if err != nil {
			return err
		}
		defer stop()
		*url, *key = base, k
	}
	w, h, err := bench.ImageSize(data)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "bench service: %s, photo %s (%d×%d, %d KB), %d requests, %d concurrent, %d CPUs\n",
		*op, *photo, w, h, len(data)/1024, *n, *conc, runtime.NumCPU())

	// One warm-up request: connections, JIT-free but caches and pools.
	if _, _, err := benchCall(ctx, *url, *key, *op, data); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	var (
		mu                             sync.Mutex
		total, queue, proc, over, rest []float64
		failures                       int
	)
	jobs := make(chan struct{}, *n)
	for range *n {
		jobs <- struct{}{}
	}
	close(jobs)
	start := time.Now()
	var wg sync.WaitGroup
	for range *conc {
		wg.Go(func() {
			for range jobs {
				t0 := time.Now()
				st, status, err := benchCall(ctx, *url, *key, *op, data)
				d := bench.Millis(time.Since(t0))
				mu.Lock()
				if err != nil || status != http.StatusOK {
					failures++
				} else {
					total, queue, proc = append(total, d), append(queue, st.queue), append(proc, st.process)
					over, rest = append(over, d-st.process), append(rest, d-st.process-st.queue)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	fmt.Fprintf(stdout, "  ok %d, failed %d, %.1f req/s\n", len(total), failures, float64(len(total))/elapsed.Seconds())
	fmt.Fprintf(stdout, "  total      p50 %8.1f ms  p95 %8.1f ms\n", bench.Percentile(total, 50), bench.Percentile(total, 95))
	fmt.Fprintf(stdout, "  processing p50 %8.1f ms  p95 %8.1f ms\n", bench.Percentile(proc, 50), bench.Percentile(proc, 95))
	fmt.Fprintf(stdout, "  overhead   p50 %8.1f ms  p95 %8.1f ms  (total − processing)\n", bench.Percentile(over, 50), bench.Percentile(over, 95))
	fmt.Fprintf(stdout, "   of which in queue  p50 %8.1f ms  p95 %8.1f ms  (enqueue → worker pickup, incl. waiting for a free worker)\n", bench.Percentile(queue, 50), bench.Percentile(queue, 95))
	fmt.Fprintf(stdout, "   of which transport p50 %8.1f ms  p95 %8.1f ms  (HTTP upload/download, Redis in and out)\n", bench.Percentile(rest, 50), bench.Percentile(rest, 95))
	if failures > 0 {
		return fmt.Errorf("%d requests failed", failures)
	}
	return nil
}

var (
	queueRE   = regexp.MustCompile(`queue;dur=([0-9.]+)`)
	processRE = regexp.MustCompile(`process;dur=([0-9.]+)`)
)

// serverTiming is a response's Server-Timing, in ms.
type serverTiming struct{ queue, process float64 }

// benchCall sends one photo and returns the server's timings.
func benchCall(ctx context.Context, url, key, op string, photo []byte) (serverTiming, int, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, _ := mw.CreateFormFile("image", "photo.jpg")
	fw.Write(photo)
	mw.Close()
	var st serverTiming
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(url, "/")+"/v1/"+op, &body)
	if err != nil {
		return st, 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, 0, err
	}
	defer res.Body.Close()
	if _, err := io.Copy(io.Discard, res.Body); err != nil {
		return st, 0, err
	}
	h := res.Header.Get("Server-Timing")
	q, p := queueRE.FindStringSubmatch(h), processRE.FindStringSubmatch(h)
	if res.StatusCode != http.StatusOK || q == nil || p == nil {
		return st, res.StatusCode, fmt.Errorf("status %d", res.StatusCode)
	}
	st.queue, _ = strconv.ParseFloat(q[1], 64)
	st.process, _ = strconv.ParseFloat(p[1], 64)
	return st, res.StatusCode, nil
}

// startBenchService runs `carphoto all` in this process with a rate limit
// the benchmark cannot reach and a funded account.
func startBenchService(ctx context.Context, getenv func(string) string) (url, key string, stop func(), err error) {
	var cleanups []func()
	stop = func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	defer func() {
		if err != nil {
			stop()
		}
	}()
	cfg, err := loadConfig(func(k string) string {
		switch k {
		case "PORT":
			return "0"
		case "RATE_LIMIT_PER_MINUTE":
			return "1000000"
		case "LOG_LEVEL":
			return "warn"
		}
		return getenv(k)
	})
	if err != nil {
		return "", "", nil, err
	}
	if !cfg.redisConfigured() {
		m := miniredis.NewMiniRedis()
		m.ClockTTL(true)
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return "", "", nil, err
		}
		cleanups = append(cleanups, m.Close)
		cfg.RedisURL = "redis://" + m.Addr()
	}
	rdb, _, err := cfg.redisClient(cfg.RedisURL)
	if err != nil {
		return "", "", nil, err
	}
	_, key, err = billing.New(rdb, cfg.billingConfig(zerolog.Nop())).CreateAccount(ctx, "bench", 1_000_000)
	rdb.Close()
	if err != nil {
		return "", "", nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- runService(sctx, "all", cfg, pw, io.Discard); pw.Close() }()
	cleanups = append(cleanups, func() { cancel(); <-done })
	sc := bufio.NewScanner(pr)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "carphoto listening on "); ok {
			url = strings.TrimSpace(rest)
			break
		}
	}
	if url == "" {
		return "", "", nil, errors.New("the service did not start")
	}
	go io.Copy(io.Discard, pr)
	time.Sleep(200 * time.Millisecond) // the worker registers its heartbeat
	return url, key, stop, nil
}

// runBenchIdle measures the CPU a worker burns while its queue is empty, for
// each poll interval asked, from the process's own rusage.
func runBenchIdle(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench idle", flag.ContinueOnError)
	fs.SetOutput(stdout)
	intervals := fs.String("intervals", "10ms,20ms,40ms,80ms,1s", "TaskCheckInterval values to measure")
	seconds := fs.Int("seconds", 20, "seconds to measure each")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := getenv("REDIS_URL")
	if url == "" {
		return errors.New("bench idle: set REDIS_URL to a real Redis (an embedded one would be measured too)")
	}
	cfg, err := loadConfig(getenv)
	if err != nil {
		return err
	}
	opt, err := cfg.redisOptions(url)
	if err != nil {
		return err
	}
	rdb := redis.NewClient(opt)
	defer rdb.Close()
	fmt.Fprintf(stdout, "bench idle: worker with an empty queue, concurrency %d, %d s each, Redis %s\n", cfg.WorkerConcurrency, *seconds, opt.Addr)
	for _, s := range strings.Split(*intervals, ",") {
		iv, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		wc := cfg.workerConfig()
		wc.TaskCheckInterval = iv
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- worker.New(wc, newLogger("warn", io.Discard), rdb).Run(wctx) }()
		time.Sleep(2 * time.Second) // start-up work is not idle work
		c0, t0 := bench.CPUTime(), time.Now()
		select {
		case <-time.After(time.Duration(*seconds) * time.Second):
		case <-ctx.Done():
		}
		c1, t1 := bench.CPUTime(), time.Now()
		cancel()
		<-done
		fmt.Fprintf(stdout, "  interval %-6v  idle CPU %5.1f%% of a core  (expected pickup delay p50 %v)\n",
			iv, 100*float64(c1-c0)/float64(t1.Sub(t0)), iv/2)
	}
	return nil
}

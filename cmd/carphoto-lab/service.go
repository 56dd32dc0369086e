package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"

	"carphoto/cmd/carphoto-lab/internal/bench"
)

// runBenchService measures latency through the whole path, HTTP → queue →
// worker → response, and the queue's share of it: total minus the worker's
// processing time (from the Server-Timing header).
//
// Without --url it starts the service binary (`carphoto all`, on REDIS_URL
// when set, else on a Redis embedded here) with a funded account and no
// rate limit.
func benchService(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench service", flag.ContinueOnError)
	fs.SetOutput(stdout)
	url := fs.String("url", "", "base URL of a running service (default: start one)")
	bin := fs.String("carphoto", "", "the service binary to start without --url (default: go build ./cmd/carphoto)")
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
		b, cleanup, err := serviceBinary(ctx, *bin)
		if err != nil {
			return err
		}
		defer cleanup()
		*bin = b
		base, k, stop, err := startBenchService(ctx, *bin, getenv)
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

// service is the service binary running in a child process.
type service struct {
	url  string // the web side's base URL (bench service)
	cmd  *exec.Cmd
	done chan error
}

// redisFor is the Redis the child services use: REDIS_URL when set, else
// one embedded in this process (its cost is then this process's, not the
// measured one's).
func redisFor(getenv func(string) string) (url string, stop func(), err error) {
	if url := getenv("REDIS_URL"); url != "" {
		return url, func() {}, nil
	}
	m := miniredis.NewMiniRedis()
	m.ClockTTL(true) // without it TTLs never run down
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return "", nil, err
	}
	return "redis://" + m.Addr(), m.Close, nil
}

// serviceBinary is the carphoto binary to run: path when set, else one
// built from ./cmd/carphoto into a temporary folder that cleanup removes.
func serviceBinary(ctx context.Context, path string) (bin string, cleanup func(), err error) {
	if path != "" {
		return path, func() {}, nil
	}
	dir, err := os.MkdirTemp("", "carphoto-lab-*")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "carphoto")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/carphoto")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("go build ./cmd/carphoto (run from the repository root, or name the binary with --carphoto): %v\n%s", err, out)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}

// startService runs `bin mode` with env added to this process's
// environment; for "all" it waits until the web side listens.
func startService(ctx context.Context, bin, mode string, env []string) (*service, error) {
	cmd := exec.CommandContext(ctx, bin, mode)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &service{cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewScanner(out)
	if mode == "all" {
		for lines.Scan() {
			if _, rest, ok := strings.Cut(lines.Text(), "listening on "); ok {
				s.url = strings.TrimSpace(rest)
				break
			}
		}
	}
	go func() {
		for lines.Scan() {
		}
		s.done <- cmd.Wait()
	}()
	if mode == "all" && s.url == "" {
		s.stop()
		return nil, errors.New("the service did not start")
	}
	return s, nil
}

// stop asks the service to stop (SIGTERM) and waits for it.
func (s *service) stop() {
	s.cmd.Process.Signal(syscall.SIGTERM)
	<-s.done
}

// createAccount makes a funded account with the service's admin command
// and returns its API key.
func createAccount(ctx context.Context, bin string, env []string, credits int64) (string, error) {
	cmd := exec.CommandContext(ctx, bin, "accounts", "create", "--name", "bench", "--credits", strconv.FormatInt(credits, 10))
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("carphoto accounts create: %w", err)
	}
	return apiKeyOf(out)
}

// apiKeyOf is the key in what `carphoto accounts create` printed: apiKey,
// as the API writes its names, or api_key, as a carphoto before 2 Dec
// 2026 printed it (the lab may drive an older binary, -carphoto BIN).
func apiKeyOf(out []byte) (string, error) {
	var acct struct {
		Key    string `json:"apiKey"`
		OldKey string `json:"api_key"`
	}
	if err := json.Unmarshal(out, &acct); err != nil || acct.Key == "" && acct.OldKey == "" {
		return "", fmt.Errorf("carphoto accounts create answered %q", out)
	}
	return cmp.Or(acct.Key, acct.OldKey), nil
}

// startBenchService runs `carphoto all` with a rate limit the benchmark
// cannot reach and a funded account.
func startBenchService(ctx context.Context, bin string, getenv func(string) string) (url, key string, stop func(), err error) {
	redisURL, stopRedis, err := redisFor(getenv)
	if err != nil {
		return "", "", nil, err
	}
	env := []string{"REDIS_URL=" + redisURL, "PORT=0", "RATE_LIMIT_PER_MINUTE=1000000", "LOG_LEVEL=warn"}
	if key, err = createAccount(ctx, bin, env, 1_000_000); err != nil {
		stopRedis()
		return "", "", nil, err
	}
	s, err := startService(ctx, bin, "all", env)
	if err != nil {
		stopRedis()
		return "", "", nil, err
	}
	time.Sleep(200 * time.Millisecond) // the worker registers its heartbeat
	return s.url, key, func() { s.stop(); stopRedis() }, nil
}

// benchIdle measures the CPU a worker process (`carphoto worker`) burns
// while its queue is empty, for each poll interval asked, from its
// /proc/PID/stat.
func benchIdle(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench idle", flag.ContinueOnError)
	fs.SetOutput(stdout)
	intervals := fs.String("intervals", "10ms,20ms,40ms,80ms,1s", "TaskCheckInterval values to measure")
	seconds := fs.Int("seconds", 20, "seconds to measure each")
	bin := fs.String("carphoto", "", "the service binary to run (default: go build ./cmd/carphoto)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := getenv("REDIS_URL")
	if url == "" {
		return errors.New("bench idle: set REDIS_URL to a real Redis (an embedded one would be measured too)")
	}
	b, cleanup, err := serviceBinary(ctx, *bin)
	if err != nil {
		return err
	}
	defer cleanup()
	*bin = b
	concurrency := getenv("WORKER_CONCURRENCY")
	if concurrency == "" {
		concurrency = fmt.Sprint(runtime.GOMAXPROCS(0))
	}
	fmt.Fprintf(stdout, "bench idle: worker with an empty queue, concurrency %s, %d s each, Redis %s\n", concurrency, *seconds, url)
	for _, s := range strings.Split(*intervals, ",") {
		iv, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return err
		}
		w, err := startService(ctx, *bin, "worker", []string{"TASK_CHECK_INTERVAL=" + iv.String(), "LOG_LEVEL=warn"})
		if err != nil {
			return err
		}
		time.Sleep(2 * time.Second) // start-up work is not idle work
		c0, t0 := processCPU(w.cmd.Process.Pid), time.Now()
		select {
		case <-time.After(time.Duration(*seconds) * time.Second):
		case <-ctx.Done():
		}
		c1, t1 := processCPU(w.cmd.Process.Pid), time.Now()
		w.stop()
		if c0 < 0 || c1 < 0 {
			return errors.New("bench idle: the worker's CPU time cannot be read from /proc (Linux only)")
		}
		fmt.Fprintf(stdout, "  interval %-6v  idle CPU %5.1f%% of a core  (expected pickup delay p50 %v)\n",
			iv, 100*float64(c1-c0)/float64(t1.Sub(t0)), iv/2)
	}
	return nil
}

// processCPU is the CPU time (user plus system) process pid has used, from
// /proc/PID/stat in clock ticks of 10 ms (Linux's USER_HZ); -1 where it
// cannot be read.
func processCPU(pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The fields after the command's name, which is in parentheses: state
	// is the first, utime and stime the 12th and 13th.
	_, rest, ok := bytes.Cut(data, []byte(") "))
	f := strings.Fields(string(rest))
	if !ok || len(f) < 13 {
		return -1
	}
	user, err1 := strconv.ParseInt(f[11], 10, 64)
	sys, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(user+sys) * 10 * time.Millisecond
}

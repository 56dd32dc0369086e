package api

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"carphoto/internal/service"
	"carphoto/internal/testenv/e2etest"
)

// TestMetricsAfterCalls makes a few calls, then reads /metrics as
// Prometheus would and checks what an operator would graph.
func TestMetricsAfterCalls(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"METRICS_TOKEN": e2etest.MetricsToken, "RATE_LIMIT_PER_MINUTE": "4"})
	id, key := s.Account(t, 10)
	photo := e2etest.CarPhoto(t)
	for range 2 {
		if status, _, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo)); status != http.StatusOK {
			t.Fatalf("blur-plates: %d %.200s", status, body)
		}
	}
	status, h, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.Field("style", "blur"))
	e2etest.WantError(t, status, h, body, http.StatusBadRequest, "missing_image")
	if status, _, _ := e2etest.Do(t, http.MethodGet, s.URL+"/v1/account", key, "", nil); status != http.StatusOK {
		t.Fatalf("account: %d", status)
	}
	status, h, body = e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", photo))
	e2etest.WantError(t, status, h, body, http.StatusTooManyRequests, "rate_limited")

	status, h, body = e2etest.Do(t, http.MethodGet, s.URL+"/metrics", "", "", nil)
	e2etest.WantError(t, status, h, body, http.StatusUnauthorized, "invalid_api_key")

	// A worker answers the request before Asynq records its task done: let
	// the queue settle (a second or so) before reading its figures.
	f := e2etest.Scrape(t, http.DefaultClient, s.URL+"/metrics")
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if e2etest.Value(f, "carphoto_queue_tasks", "queue", "photos", "state", "active") == 0 &&
			e2etest.Value(f, "carphoto_queue_processed_total", "queue", "photos") >= 2 &&
			e2etest.Value(f, "carphoto_worker_tasks_total", "op", "blur-plates", "outcome", "ok") >= 2 &&
			e2etest.Value(f, "carphoto_worker_tasks_running") == 0 {
			break
		}
		f = e2etest.Scrape(t, http.DefaultClient, s.URL+"/metrics")
	}
	for _, c := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"carphoto_http_requests_total", []string{"op", "blur-plates", "status", "200"}, 2},
		{"carphoto_http_requests_total", []string{"op", "blur-plates", "status", "400"}, 1},
		{"carphoto_http_requests_total", []string{"op", "blur-plates", "status", "429"}, 1},
		{"carphoto_http_requests_total", []string{"op", "/v1/account", "status", "200"}, 1},
		{"carphoto_rate_limit_refusals_total", []string{"op", "blur-plates"}, 1},
		{"carphoto_credits_charged_total", []string{"op", "blur-plates"}, 2},
		{"carphoto_answer_delivery_total", []string{"outcome", "acknowledged"}, 2},
		{"carphoto_photos_in_flight", nil, 0},
		{"carphoto_worker_tasks_total", []string{"op", "blur-plates", "outcome", "ok"}, 2},
		{"carphoto_worker_tasks_running", nil, 0},
		{"carphoto_queue_up", []string{"queue", "photos"}, 1},
		{"carphoto_queue_tasks", []string{"queue", "photos", "state", "pending"}, 0},
		{"carphoto_queue_tasks", []string{"queue", "photos", "state", "active"}, 0},
	} {
		if got := e2etest.Value(f, c.name, c.labels...); got != c.want {
			t.Errorf("%s%v = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if got := s.Credits(t, id); got != 8 {
		t.Errorf("balance %d, want 8: the counter must match the ledger", got)
	}
	if got := e2etest.Value(f, "carphoto_plates_found_total", "op", "blur-plates"); got < 0 {
		t.Errorf("carphoto_plates_found_total absent after two blur-plates calls")
	}
	if got := e2etest.Value(f, "carphoto_queue_processed_total", "queue", "photos"); got < 2 {
		t.Errorf("carphoto_queue_processed_total = %v, want at least the 2 tasks", got)
	}
	for _, fam := range []string{"carphoto_redis_errors_total"} {
		for _, m := range f[fam].GetMetric() {
			if m.GetCounter().GetValue() != 0 {
				t.Errorf("%s %v = %v, want none on a healthy Redis", fam, m.GetLabel(), m.GetCounter().GetValue())
			}
		}
	}
	// Histograms: two observations each, of plausible size.
	for _, c := range []struct {
		name   string
		labels []string
		max    float64
	}{
		{"carphoto_http_request_duration_seconds", []string{"op", "blur-plates", "status", "200"}, 60},
		{"carphoto_queue_wait_seconds", []string{"op", "blur-plates"}, 10},
		{"carphoto_processing_seconds", []string{"op", "blur-plates"}, 30},
		{"carphoto_worker_task_duration_seconds", []string{"op", "blur-plates"}, 30},
	} {
		m := e2etest.Series(f, c.name, c.labels...)
		if m == nil || m.Histogram == nil {
			t.Errorf("no histogram %s%v", c.name, c.labels)
			continue
		}
		h := m.Histogram
		if h.GetSampleCount() != 2 || h.GetSampleSum() < 0 || h.GetSampleSum() > 2*c.max {
			t.Errorf("%s%v: %d observations summing to %.3f s, want 2 within %v s each", c.name, c.labels, h.GetSampleCount(), h.GetSampleSum(), c.max)
		}
		if b := h.GetBucket(); len(b) == 0 || b[len(b)-1].GetCumulativeCount() != 2 {
			t.Errorf("%s%v: buckets %v do not hold both observations", c.name, c.labels, b)
		}
	}
	if m := e2etest.Series(f, "carphoto_processing_seconds", "op", "blur-plates"); m != nil && m.Histogram.GetSampleSum() <= 0 {
		t.Errorf("processing took no time at all")
	}
	if e2etest.Value(f, "go_goroutines") <= 0 {
		t.Errorf("go_goroutines missing: the runtime collector is not registered")
	}
}

// TestWorkerMetricsPort runs a lone worker with METRICS_PORT and reads its
// metrics there, behind the token.
func TestWorkerMetricsPort(t *testing.T) {
	s := e2etest.StartService(t, nil)
	env := map[string]string{s.RS.EnvName(): s.RS.URL, "METRICS_PORT": "0", "METRICS_TOKEN": e2etest.MetricsToken, "LOG_LEVEL": "warn"}
	out := &e2etest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- service.Run(ctx, []string{"worker"}, func(k string) string { return env[k] }, out, io.Discard)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker stopped with error: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("worker did not stop")
		}
	})
	url := e2etest.WaitFor(t, out, regexp.MustCompile(`worker metrics on (http://\S+)`))
	// Not the public API: a plain client, outside the OpenAPI check.
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	res, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("without the token: %d, want 401", res.StatusCode)
	}
	f := e2etest.Scrape(t, client, url)
	if got := e2etest.Value(f, "carphoto_worker_tasks_running"); got != 0 {
		t.Errorf("carphoto_worker_tasks_running = %v, want 0", got)
	}
	if f["carphoto_http_requests_total"] != nil {
		t.Errorf("a lone worker reports HTTP requests")
	}
}

// hostIP returns a non-loopback address of this host, or skips the test.
func hostIP(t *testing.T) net.IP {
	t.Helper()
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
			return n.IP
		}
	}
	t.Skip("this host has no non-loopback IPv4 address to call from")
	return nil
}

// Without METRICS_TOKEN, /metrics answers loopback clients only: another
// address gets 401 JSON; a worker's metrics listener binds 127.0.0.1 unless
// METRICS_HOST says otherwise, so another address cannot even connect.
func TestMetricsLoopbackOnly(t *testing.T) {
	ip := hostIP(t)
	s := e2etest.StartService(t, nil)
	client := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	get := func(url string) (int, string, error) {
		res, err := client.Get(url)
		if err != nil {
			return 0, "", err
		}
		defer res.Body.Close()
		var e struct{ Error, Code string }
		json.NewDecoder(res.Body).Decode(&e)
		return res.StatusCode, e.Code, nil
	}
	if status, _, err := get(s.URL + "/metrics"); err != nil || status != http.StatusOK {
		t.Errorf("/metrics from loopback without a token: %d %v, want 200", status, err)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(s.URL, "http://"))
	outside := "http://" + net.JoinHostPort(ip.String(), port) + "/metrics"
	if status, code, err := get(outside); err != nil || status != http.StatusUnauthorized || code != "invalid_api_key" {
		t.Errorf("/metrics from %s without a token: %d %q %v, want 401 invalid_api_key", ip, status, code, err)
	}

	env := map[string]string{s.RS.EnvName(): s.RS.URL, "METRICS_PORT": "0", "LOG_LEVEL": "warn"}
	out := &e2etest.SyncBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- service.Run(ctx, []string{"worker"}, func(k string) string { return env[k] }, out, io.Discard)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("worker stopped with error: %v", err)
		}
	}()
	url := e2etest.WaitFor(t, out, regexp.MustCompile(`worker metrics on (http://\S+)`))
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("worker metrics on %s, want 127.0.0.1 by default", url)
	}
	if status, _, err := get(url); err != nil || status != http.StatusOK {
		t.Errorf("worker /metrics from loopback: %d %v, want 200", status, err)
	}
	_, wport, _ := net.SplitHostPort(strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/metrics"))
	if _, _, err := get("http://" + net.JoinHostPort(ip.String(), wport) + "/metrics"); err == nil {
		t.Errorf("worker /metrics reachable at %s, want it bound to loopback only", ip)
	}
}

// A car-cutout of a photo with no car is refused 422 car_not_found,
// uncharged, and the refusal is counted with its reason in
// carphoto_car_refusals_total.
func TestCarRefusalsCounted(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"METRICS_TOKEN": e2etest.MetricsToken})
	id, key := s.Account(t, 10)
	status, h, body := e2etest.Post(t, s.URL+"/v1/car-cutout", key, e2etest.File("image", e2etest.PlainJPEG(t)))
	e2etest.WantError(t, status, h, body, http.StatusUnprocessableEntity, "car_not_found")
	f := e2etest.Scrape(t, http.DefaultClient, s.URL+"/metrics")
	if got := e2etest.Value(f, "carphoto_car_refusals_total", "op", "car-cutout", "reason", "no_vehicle"); got != 1 {
		t.Errorf("carphoto_car_refusals_total{op=car-cutout,reason=no_vehicle} = %v, want 1", got)
	}
	if got := s.Credits(t, id); got != 10 {
		t.Errorf("balance %d, want 10: a refusal is not charged", got)
	}
}

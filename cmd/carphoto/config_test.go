package main

import (
	"strings"
	"testing"
	"time"
)

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

func TestConfigDefaults(t *testing.T) {
	c, err := loadConfig(envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.UploadTimeout != 10*time.Second || c.MaxInFlightPerKey != 4 || c.IdempotencyTTL != 10*time.Minute {
		t.Errorf("UPLOAD_TIMEOUT %v, MAX_IN_FLIGHT_PER_KEY %d, IDEMPOTENCY_TTL %v; want 10s, 4, 10m",
			c.UploadTimeout, c.MaxInFlightPerKey, c.IdempotencyTTL)
	}
	if c.MetricsHost != "127.0.0.1" || c.AuthFailuresPerMinute != 30 {
		t.Errorf("METRICS_HOST %q, AUTH_FAILURES_PER_MINUTE %d; want 127.0.0.1, 30", c.MetricsHost, c.AuthFailuresPerMinute)
	}
	// A shorter request deadline takes the upload's default down with it.
	c, err = loadConfig(envOf(map[string]string{"REQUEST_TIMEOUT": "6s"}))
	if err != nil || c.UploadTimeout != 2*time.Second {
		t.Errorf("REQUEST_TIMEOUT=6s: UPLOAD_TIMEOUT %v, %v; want 2s", c.UploadTimeout, err)
	}
}

func TestConfigRefusals(t *testing.T) {
	_, err := loadConfig(envOf(map[string]string{
		"UPLOAD_TIMEOUT":           "30s", // not below REQUEST_TIMEOUT
		"MAX_IN_FLIGHT_PER_KEY":    "0",
		"METRICS_HOST":             "everywhere",
		"AUTH_FAILURES_PER_MINUTE": "0",
	}))
	for _, name := range []string{"UPLOAD_TIMEOUT", "MAX_IN_FLIGHT_PER_KEY", "METRICS_HOST", "AUTH_FAILURES_PER_MINUTE"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
	if _, err := loadConfig(envOf(map[string]string{"UPLOAD_TIMEOUT": "fast"})); err == nil || !strings.Contains(err.Error(), "UPLOAD_TIMEOUT") {
		t.Errorf("UPLOAD_TIMEOUT=fast: %v, want an error naming it", err)
	}
}

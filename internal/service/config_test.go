package service

import (
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"carphoto/billing"
)

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(nil))
	if err != nil {
		t.Fatal(err)
	}
	if c.UploadTimeout != 10*time.Second || c.MaxInFlightPerKey != 4 || c.IdempotencyTTL != 10*time.Minute {
		t.Errorf("UPLOAD_TIMEOUT %v, MAX_IN_FLIGHT_PER_KEY %d, IDEMPOTENCY_TTL %v; want 10s, 4, 10m",
			c.UploadTimeout, c.MaxInFlightPerKey, c.IdempotencyTTL)
	}
	if c.MaxBackdropPixels != 16_000_000 || c.MaxBackdropBytes != 15<<20 {
		t.Errorf("MAX_BACKDROP_PIXELS %d, MAX_BACKDROP_BYTES %d; want 16000000, 15 MB", c.MaxBackdropPixels, c.MaxBackdropBytes)
	}
	if c.MetricsHost != "127.0.0.1" || c.AuthFailuresPerMinute != 30 {
		t.Errorf("METRICS_HOST %q, AUTH_FAILURES_PER_MINUTE %d; want 127.0.0.1, 30", c.MetricsHost, c.AuthFailuresPerMinute)
	}
	if c.Heartbeat != time.Second || c.HoldSweepInterval != 30*time.Second || c.BillingConfig(zerolog.Nop()).ReapInterval != 30*time.Second {
		t.Errorf("HEARTBEAT_INTERVAL %v, HOLD_SWEEP_INTERVAL %v (billing's %v); want 1s, 30s",
			c.Heartbeat, c.HoldSweepInterval, c.BillingConfig(zerolog.Nop()).ReapInterval)
	}
	c, err = LoadConfig(envOf(map[string]string{"HEARTBEAT_INTERVAL": "200ms", "HOLD_SWEEP_INTERVAL": "1s"}))
	if err != nil || c.workerConfig().Heartbeat != 200*time.Millisecond || c.BillingConfig(zerolog.Nop()).ReapInterval != time.Second {
		t.Errorf("HEARTBEAT_INTERVAL=200ms, HOLD_SWEEP_INTERVAL=1s: worker's heartbeat %v, billing's sweep %v, %v",
			c.workerConfig().Heartbeat, c.BillingConfig(zerolog.Nop()).ReapInterval, err)
	}
	// A shorter request deadline takes the upload's default down with it.
	c, err = LoadConfig(envOf(map[string]string{"REQUEST_TIMEOUT": "6s"}))
	if err != nil || c.UploadTimeout != 2*time.Second {
		t.Errorf("REQUEST_TIMEOUT=6s: UPLOAD_TIMEOUT %v, %v; want 2s", c.UploadTimeout, err)
	}
}

func TestConfigRefusals(t *testing.T) {
	t.Parallel()
	_, err := LoadConfig(envOf(map[string]string{
		"UPLOAD_TIMEOUT":           "30s", // not below REQUEST_TIMEOUT
		"MAX_IN_FLIGHT_PER_KEY":    "0",
		"METRICS_HOST":             "everywhere",
		"HOST":                     "my-laptop",
		"AUTH_FAILURES_PER_MINUTE": "0",
		"MAX_BACKDROP_PIXELS":      "16000001", // past the largest answer
		"MAX_BACKDROP_BYTES":       "1",
		"HEARTBEAT_INTERVAL":       "0s",
		"HOLD_SWEEP_INTERVAL":      "soon",
	}))
	for _, name := range []string{"UPLOAD_TIMEOUT", "MAX_IN_FLIGHT_PER_KEY", "METRICS_HOST", `HOST="my-laptop"`, "AUTH_FAILURES_PER_MINUTE", "MAX_BACKDROP_PIXELS", "MAX_BACKDROP_BYTES",
		"HEARTBEAT_INTERVAL", "HOLD_SWEEP_INTERVAL"} {
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("error %v does not name %s", err, name)
		}
	}
	if _, err := LoadConfig(envOf(map[string]string{"UPLOAD_TIMEOUT": "fast"})); err == nil || !strings.Contains(err.Error(), "UPLOAD_TIMEOUT") {
		t.Errorf("UPLOAD_TIMEOUT=fast: %v, want an error naming it", err)
	}
}

// ALLOW_PRIVATE_URLS opens imageUrl, logoUrl and webhooks to private
// addresses; WEBHOOK_ALLOW_PRIVATE, its older name, still does.
func TestConfigAllowPrivateURLs(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"ALLOW_PRIVATE_URLS": "true"}, true},
		{map[string]string{"WEBHOOK_ALLOW_PRIVATE": "true"}, true},
		{map[string]string{"ALLOW_PRIVATE_URLS": "false"}, false},
	} {
		c, err := LoadConfig(envOf(tc.env))
		if err != nil || c.AllowPrivateURLs != tc.want || c.serverConfig().AllowPrivateURLs != tc.want || c.notifier().AllowPrivate != tc.want {
			t.Errorf("%v: allow private %v (server %v, webhooks %v), %v; want %v", tc.env, c.AllowPrivateURLs,
				c.serverConfig().AllowPrivateURLs, c.notifier().AllowPrivate, err, tc.want)
		}
	}
	if _, err := LoadConfig(envOf(map[string]string{"ALLOW_PRIVATE_URLS": "yes"})); err == nil || !strings.Contains(err.Error(), "ALLOW_PRIVATE_URLS") {
		t.Errorf("ALLOW_PRIVATE_URLS=yes: %v, want an error naming it", err)
	}
}

// OBJECT_STORE (or its old names VIDEO_STORE and VIDEO_DIR) is a
// directory or s3://bucket/prefix, which takes its server and keys from
// the variables every S3 client reads; a wrong one is named at start, and
// so are two of the names set together.
func TestConfigObjectStore(t *testing.T) {
	t.Parallel()
	keys := map[string]string{"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret"}
	with := func(kv map[string]string) map[string]string {
		m := map[string]string{}
		for k, v := range keys {
			m[k] = v
		}
		for k, v := range kv {
			m[k] = v
		}
		return m
	}
	for _, name := range []string{"OBJECT_STORE", "VIDEO_STORE"} {
		c, err := LoadConfig(envOf(with(map[string]string{name: "s3://videos-bucket/carphoto/jobs/",
			"S3_ENDPOINT": "http://10.0.0.5:8333", "AWS_REGION": "eu-west-3"})))
		if err != nil {
			t.Fatal(err)
		}
		if s := c.Store.S3; s == nil || s.Bucket != "videos-bucket" || s.Prefix != "carphoto/jobs" || s.Endpoint != "http://10.0.0.5:8333" ||
			s.Region != "eu-west-3" || s.AccessKey != "AKIDEXAMPLE" || s.SecretKey != "secret" {
			t.Errorf("%s: S3 config %+v", name, s)
		}
		if name := c.Store.String(); strings.Contains(name, "secret") || !strings.Contains(name, "s3://videos-bucket") {
			t.Errorf("the store as logged: %q", name)
		}
	}
	for _, name := range []string{"OBJECT_STORE", "VIDEO_DIR"} {
		c, err := LoadConfig(envOf(map[string]string{name: "/data/carphoto"}))
		if err != nil || c.Store.S3 != nil || c.Store.Dir != "/data/carphoto" || c.StoreDefault {
			t.Errorf("%s=/data/carphoto: store %+v, %v; want that directory", name, c.Store, err)
		}
	}
	for _, tt := range []struct {
		env  map[string]string
		want []string // every one named in the error
	}{
		{with(map[string]string{"VIDEO_STORE": "s3://b-1/p", "VIDEO_DIR": "/data/videos"}), []string{"VIDEO_DIR", "VIDEO_STORE", "OBJECT_STORE"}},
		{with(map[string]string{"OBJECT_STORE": "s3://b-1/p", "VIDEO_DIR": "/data/videos"}), []string{"VIDEO_DIR", "OBJECT_STORE"}},
		{with(map[string]string{"OBJECT_STORE": "https://bucket/p"}), []string{"OBJECT_STORE", "s3://bucket"}},
		{with(map[string]string{"VIDEO_STORE": "https://bucket/p"}), []string{"VIDEO_STORE", "s3://bucket"}},
		{with(map[string]string{"OBJECT_STORE": "s3://Bad_Bucket/p"}), []string{"OBJECT_STORE", "bucket name"}},
		{with(map[string]string{"OBJECT_STORE": "s3://b-1/p", "S3_ENDPOINT": "ftp://host"}), []string{"S3_ENDPOINT"}},
		{with(map[string]string{"OBJECT_STORE": "s3://b-1/p", "S3_ENDPOINT": "http://host:8333/bucket"}), []string{"S3_ENDPOINT"}},
		{map[string]string{"OBJECT_STORE": "s3://b-1/p"}, []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"}},
		{map[string]string{"MAX_ASSET_STORAGE_BYTES": "lots"}, []string{"MAX_ASSET_STORAGE_BYTES"}},
	} {
		_, err := LoadConfig(envOf(tt.env))
		for _, name := range tt.want {
			if err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("%v: error %v does not name %s", tt.env, err, name)
			}
		}
	}
	// Without a store set the S3 variables change nothing: files stay on disk.
	c, err := LoadConfig(envOf(with(map[string]string{"S3_ENDPOINT": "http://10.0.0.5:8333"})))
	if err != nil || c.Store.S3 != nil || !c.StoreDefault {
		t.Errorf("S3_ENDPOINT alone: store %+v, %v; want the default directory", c.Store, err)
	}
}

// REDIS_CLUSTER_URL takes go-redis's cluster URL form and makes money
// writes wait for one replica by default; with REDIS_URL too, or
// malformed, the start is refused naming the variables.
func TestConfigRedisCluster(t *testing.T) {
	t.Parallel()
	const cluster = "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002"
	c, err := LoadConfig(envOf(map[string]string{"REDIS_CLUSTER_URL": cluster}))
	if err != nil || c.RedisWaitReplicas != 1 || c.RedisWaitTimeout != time.Second {
		t.Errorf("REDIS_CLUSTER_URL alone: REDIS_WAIT_REPLICAS %d, REDIS_WAIT_TIMEOUT %v, %v; want 1, 1s, no error", c.RedisWaitReplicas, c.RedisWaitTimeout, err)
	}
	c, err = LoadConfig(envOf(map[string]string{"REDIS_URL": "redis://127.0.0.1:6379"}))
	if err != nil || c.RedisWaitReplicas != 0 {
		t.Errorf("REDIS_URL: REDIS_WAIT_REPLICAS %d, %v; want 0 (one Redis, no replica to wait for)", c.RedisWaitReplicas, err)
	}
	c, err = LoadConfig(envOf(map[string]string{"REDIS_URL": "redis://127.0.0.1:6379", "REDIS_WAIT_REPLICAS": "2", "REDIS_WAIT_TIMEOUT": "250ms"}))
	if err != nil || c.RedisWaitReplicas != 2 || c.RedisWaitTimeout != 250*time.Millisecond {
		t.Errorf("REDIS_WAIT_REPLICAS=2 REDIS_WAIT_TIMEOUT=250ms: %d, %v, %v", c.RedisWaitReplicas, c.RedisWaitTimeout, err)
	}
	for _, tc := range []struct {
		env  map[string]string
		name []string
	}{
		{map[string]string{"REDIS_URL": "redis://127.0.0.1:6379", "REDIS_CLUSTER_URL": cluster}, []string{"REDIS_URL", "REDIS_CLUSTER_URL"}},
		{map[string]string{"REDIS_CLUSTER_URL": "http://127.0.0.1:7000"}, []string{"REDIS_CLUSTER_URL"}},
		{map[string]string{"REDIS_CLUSTER_URL": cluster, "REDIS_WAIT_REPLICAS": "-1"}, []string{"REDIS_WAIT_REPLICAS"}},
		{map[string]string{"REDIS_WAIT_TIMEOUT": "soon"}, []string{"REDIS_WAIT_TIMEOUT"}},
	} {
		_, err := LoadConfig(envOf(tc.env))
		for _, n := range tc.name {
			if err == nil || !strings.Contains(err.Error(), n) {
				t.Errorf("%v: error %v does not name %s", tc.env, err, n)
			}
		}
	}
}

// Each operation's price is its own CREDIT_COST_<OP>, CREDIT_COST by
// default, and the billing service prices calls with them.
func TestConfigPrices(t *testing.T) {
	t.Parallel()
	c, err := LoadConfig(envOf(map[string]string{"CREDIT_COST": "2", "CREDIT_COST_CAR_SHADOW": "5", "CREDIT_COST_BLUR_PLATES": "3"}))
	if err != nil {
		t.Fatal(err)
	}
	b := billing.New(nil, c.BillingConfig(zerolog.Nop()))
	for call, want := range map[billing.Call]int64{
		{Op: "car-shadow"}: 5, {Op: "blur-plates"}: 3, {Op: "plate-logo"}: 2, {Op: "logo-overlay"}: 2,
		{Op: "car-shadow", PlateOp: "blur-plates"}: 8, {Op: "car-cutout", PlateOp: "plate-logo"}: 4,
	} {
		if got := b.Price(call); got != want {
			t.Errorf("%s costs %d, want %d", call.Name(), got, want)
		}
	}
	if got := b.VideoPrice(15); got != 4 {
		t.Errorf("15 s of video cost %d, want 4 (VIDEO_CREDIT_COST_PER_10S defaults to CREDIT_COST)", got)
	}
	if _, err := LoadConfig(envOf(map[string]string{"CREDIT_COST_PLATE_LOGO": "0"})); err == nil || !strings.Contains(err.Error(), "CREDIT_COST_PLATE_LOGO") {
		t.Errorf("CREDIT_COST_PLATE_LOGO=0: error %v, want one naming it", err)
	}
}

func envOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

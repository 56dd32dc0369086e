// Package s3test gives tests a real S3-compatible server, SeaweedFS, which
// people run in production: the one at S3TEST_ENDPOINT when it is set (CI
// starts one), else one started for the test from the `weed` binary on
// PATH. Without either the test skips, saying so. Each test gets a bucket
// of its own.
package s3test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"carphoto/objstore"
)

// The credentials of the server this package starts, and the ones CI's
// server is given (S3TEST_ACCESS_KEY and S3TEST_SECRET_KEY override them).
const (
	AccessKey = "carphoto-test"
	SecretKey = "carphoto-test-secret-key"
	Region    = "us-east-1"
)

// Server is a bucket on an S3 server for one test.
type Server struct {
	Endpoint  string // http://127.0.0.1:port
	AccessKey string
	SecretKey string
	Bucket    string
	Client    *minio.Client // for looking behind the store's back
}

// Config is a store's configuration on the test's bucket, under prefix.
func (s *Server) Config(prefix string) objstore.S3Config {
	return objstore.S3Config{Bucket: s.Bucket, Prefix: prefix, Endpoint: s.Endpoint, Region: Region,
		AccessKey: s.AccessKey, SecretKey: s.SecretKey}
}

// Env is the environment that points carphoto at the test's bucket, under prefix.
func (s *Server) Env(prefix string) []string {
	return []string{"OBJECT_STORE=s3://" + s.Bucket + "/" + prefix, "S3_ENDPOINT=" + s.Endpoint,
		"AWS_REGION=" + Region, "AWS_ACCESS_KEY_ID=" + s.AccessKey, "AWS_SECRET_ACCESS_KEY=" + s.SecretKey}
}

// New returns a new, empty bucket on a real S3 server for the calling test.
func New(tb testing.TB) *Server {
	tb.Helper()
	s := &Server{Endpoint: os.Getenv("S3TEST_ENDPOINT"), AccessKey: AccessKey, SecretKey: SecretKey}
	if s.Endpoint != "" {
		if k := os.Getenv("S3TEST_ACCESS_KEY"); k != "" {
			s.AccessKey, s.SecretKey = k, os.Getenv("S3TEST_SECRET_KEY")
		}
	} else {
		s.Endpoint = startWeed(tb)
	}
	c, err := minio.New(strings.TrimPrefix(s.Endpoint, "http://"), &minio.Options{
		Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), Region: Region, BucketLookup: minio.BucketLookupPath,
	})
	if err != nil {
		tb.Fatalf("s3test: %v", err)
	}
	s.Client = c
	b := make([]byte, 6)
	rand.Read(b)
	s.Bucket = "carphoto-test-" + hex.EncodeToString(b)
	// A server just started takes a few seconds to take writes: its
	// volume server has to join its master first.
	ctx := context.Background()
	var last error
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if last = c.MakeBucket(ctx, s.Bucket, minio.MakeBucketOptions{Region: Region}); last != nil {
			if ok, _ := c.BucketExists(ctx, s.Bucket); !ok {
				continue
			}
		}
		_, last = c.PutObject(ctx, s.Bucket, "probe", bytes.NewReader([]byte("x")), 1, minio.PutObjectOptions{})
		if last == nil {
			last = c.RemoveObject(ctx, s.Bucket, "probe", minio.RemoveObjectOptions{})
		}
		if last == nil {
			break
		}
	}
	if last != nil {
		tb.Fatalf("s3test: the S3 server at %s takes no writes: %v", s.Endpoint, last)
	}
	tb.Cleanup(func() { removeBucket(c, s.Bucket) })
	return s
}

func removeBucket(c *minio.Client, bucket string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	objs := c.ListObjects(ctx, bucket, minio.ListObjectsOptions{Recursive: true})
	for range c.RemoveObjects(ctx, bucket, objs, minio.RemoveObjectsOptions{}) {
	}
	c.RemoveBucket(ctx, bucket)
}

// startWeed runs `weed server -s3` on free loopback ports in a temporary
// directory until the test ends, and returns its S3 endpoint; without a
// weed binary the test skips.
func startWeed(tb testing.TB) string {
	tb.Helper()
	bin, err := exec.LookPath("weed")
	if err != nil {
		tb.Skip("no S3 server for this test: set S3TEST_ENDPOINT, or put SeaweedFS's weed on PATH (.ci/run builds it)")
	}
	dir := tb.TempDir()
	cfg := filepath.Join(dir, "s3.json")
	ident := fmt.Sprintf(`{"identities":[{"name":"carphoto","credentials":[{"accessKey":%q,"secretKey":%q}],"actions":["Admin","Read","Write","List","Tagging"]}]}`, AccessKey, SecretKey)
	if err := os.WriteFile(cfg, []byte(ident), 0o600); err != nil {
		tb.Fatal(err)
	}
	p := freePorts(tb, 8)
	cmd := exec.Command(bin, "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1", "-dir="+dir,
		port("master.port", p[0]), port("master.port.grpc", p[1]), "-master.telemetry=false", "-master.volumeSizeLimitMB=64",
		port("volume.port", p[2]), port("volume.port.grpc", p[3]), "-volume.max=32", "-volume.preStopSeconds=0",
		"-filer", port("filer.port", p[4]), port("filer.port.grpc", p[5]),
		"-s3", port("s3.port", p[6]), port("s3.port.grpc", p[7]), "-s3.port.iceberg=0", "-s3.port.lance=0",
		"-s3.config="+cfg)
	// One writer for both streams: exec writes to it from one goroutine at
	// a time, and it is read only once Wait has returned (exited).
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		tb.Fatalf("s3test: start %s: %v", bin, err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	tb.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
		if tb.Failed() {
			out := log.String()
			tb.Logf("weed server's log (last 3000 bytes):\n%s", out[max(0, len(out)-3000):])
		}
	})
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", p[6])
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		// A plain dial: tests may have wrapped http.DefaultTransport.
		if c, err := net.DialTimeout("tcp", strings.TrimPrefix(endpoint, "http://"), time.Second); err == nil {
			c.Close()
			break
		}
		select {
		case <-exited:
			tb.Fatalf("s3test: weed server exited:\n%s", log.String())
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("s3test: weed's S3 gateway did not answer on %s within 60 s:\n%s", endpoint, log.String())
		}
	}
	return endpoint
}

func port(flag string, p int) string { return fmt.Sprintf("-%s=%d", flag, p) }

// freePorts returns n loopback ports free a moment ago.
func freePorts(tb testing.TB, n int) []int {
	tb.Helper()
	var ps []int
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		defer ln.Close()
		ps = append(ps, ln.Addr().(*net.TCPAddr).Port)
	}
	return ps
}

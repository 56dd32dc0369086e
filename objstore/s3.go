package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// S3Config says where an S3 store is and who it is.
type S3Config struct {
	Bucket string
	Prefix string // keys are stored as Prefix + "/" + key; empty = the bucket's root
	// Endpoint is the S3 server as a URL (https://host[:port], or
	// http:// for a server on a private network); empty = AWS in Region.
	// Any endpoint other than AWS is addressed path-style
	// (endpoint/bucket/key), which every S3-compatible server takes.
	Endpoint     string
	Region       string
	AccessKey    string
	SecretKey    string
	SessionToken string
	PartSize     uint64 // multipart upload part size; 0 = 16 MiB (what one upload buffers)
	TempDir      string // where Path puts its copies; empty = os.TempDir()
}

// S3 stores objects in an S3 bucket (AWS or any S3-compatible server), so
// that web processes and workers on different machines share them with no
// common disk.
type S3 struct {
	client   *minio.Client
	bucket   string
	prefix   string
	partSize uint64
	tempDir  string
}

// NewS3 returns an S3 store on cfg's bucket, after checking that the bucket
// is there and the credentials reach it.
func NewS3(ctx context.Context, cfg S3Config) (*S3, error) {
	host, secure, lookup := "s3.amazonaws.com", true, minio.BucketLookupAuto
	if cfg.Region != "" && cfg.Region != "us-east-1" {
		host = "s3." + cfg.Region + ".amazonaws.com"
	}
	if cfg.Endpoint != "" {
		h, s, err := parseEndpoint(cfg.Endpoint)
		if err != nil {
			return nil, err
		}
		host, secure, lookup = h, s, minio.BucketLookupPath
	}
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	client, err := minio.New(host, &minio.Options{
		Creds:        credentials.NewStaticV4(cfg.AccessKey, cfg.SecretKey, cfg.SessionToken),
		Secure:       secure,
		Region:       region,
		BucketLookup: lookup,
	})
	if err != nil {
		return nil, fmt.Errorf("object store s3: %w", err)
	}
	s := &S3{client: client, bucket: cfg.Bucket, prefix: strings.Trim(cfg.Prefix, "/"),
		partSize: cfg.PartSize, tempDir: cfg.TempDir}
	if s.partSize == 0 {
		s.partSize = 16 << 20
	}
	if s.prefix != "" {
		s.prefix += "/"
	}
	ok, err := client.BucketExists(ctx, cfg.Bucket)
	if err != nil {
		return nil, fmt.Errorf("object store s3://%s at %s: %w", cfg.Bucket, host, err)
	}
	if !ok {
		return nil, fmt.Errorf("object store s3://%s at %s: no such bucket", cfg.Bucket, host)
	}
	return s, nil
}

// parseEndpoint splits an endpoint URL into the host the client dials and
// whether it speaks TLS; a bare host means https.
func parseEndpoint(endpoint string) (host string, secure bool, err error) {
	scheme, rest, ok := strings.Cut(endpoint, "://")
	if !ok {
		scheme, rest = "https", endpoint
	}
	rest = strings.TrimSuffix(rest, "/")
	if rest == "" || strings.ContainsAny(rest, "/?#@") {
		return "", false, fmt.Errorf("S3 endpoint %q: want http(s)://host[:port]", endpoint)
	}
	switch scheme {
	case "https":
		return rest, true, nil
	case "http":
		return rest, false, nil
	}
	return "", false, fmt.Errorf("S3 endpoint %q: want http(s)://host[:port]", endpoint)
}

func (s *S3) object(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

// Put streams r to the bucket: in parts of PartSize when its length is
// unknown (an upload still arriving), in one request or parts by its size
// when r is a file or bytes in memory (a reader with Len). The object appears whole or not at all.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	name, err := s.object(key)
	if err != nil {
		return 0, err
	}
	size := int64(-1)
	switch f := r.(type) {
	case interface{ Stat() (fs.FileInfo, error) }:
		if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
			size = info.Size()
		}
	case interface{ Len() int }:
		// Bytes in memory (an asset): one request of their size, not a
		// part buffer of PartSize.
		size = int64(f.Len())
	}
	info, err := s.client.PutObject(ctx, s.bucket, name, readerCtx{ctx, r}, size, minio.PutObjectOptions{
		PartSize:    s.partSize,
		ContentType: contentType(key),
	})
	if err != nil {
		return info.Size, fmt.Errorf("object store: put %s: %w", key, err)
	}
	return info.Size, nil
}

// contentType is a key's type by its extension, for whoever looks into the
// bucket.
func contentType(key string) string {
	switch path.Ext(key) {
	case ".mp4":
		return "video/mp4"
	case ".png":
		return "image/png"
	case ".jpg", ".jpeg":
		return "image/jpeg"
	case ".webp":
		return "image/webp"
	}
	return "application/octet-stream"
}

// s3File is an object being read: each read after a seek is one ranged GET
// from that offset, so a result is streamed, never held whole.
type s3File struct {
	*minio.Object
	info minio.ObjectInfo
}

func (f s3File) Size() int64        { return f.info.Size }
func (f s3File) ModTime() time.Time { return f.info.LastModified }

func (s *S3) Open(ctx context.Context, key string) (File, error) {
	name, err := s.object(key)
	if err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err != nil {
		return nil, s.err("open", key, err)
	}
	info, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, s.err("open", key, err)
	}
	return s3File{obj, info}, nil
}

// err wraps an S3 error; a missing object wraps fs.ErrNotExist, as a
// missing file does.
func (s *S3) err(op, key string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == minio.NoSuchKey || resp.StatusCode == http.StatusNotFound && resp.Code != minio.NoSuchBucket {
		return fmt.Errorf("object store: %s %s: %w", op, key, fs.ErrNotExist)
	}
	return fmt.Errorf("object store: %s %s: %w", op, key, err)
}

func (s *S3) Delete(ctx context.Context, key string) error {
	name, err := s.object(key)
	if err != nil {
		return err
	}
	// S3 answers a delete of a missing object with success.
	if err := s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{}); err != nil {
		return s.err("delete", key, err)
	}
	return nil
}

// Path downloads key to a temporary file for ffmpeg, which reads local
// files only; done removes the copy.
func (s *S3) Path(ctx context.Context, key string) (string, func(), error) {
	f, err := s.Open(ctx, key)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	tmp, err := os.CreateTemp(s.tempDir, "carphoto-s3-*-"+key)
	if err != nil {
		return "", nil, fmt.Errorf("object store: %w", err)
	}
	done := func() { os.Remove(tmp.Name()) }
	_, err = io.Copy(tmp, readerCtx{ctx, f})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		done()
		return "", nil, fmt.Errorf("object store: copy %s: %w", key, err)
	}
	return tmp.Name(), done, nil
}

// Sweep deletes the objects under the prefix last written before cutoff,
// and the parts of uploads begun before it and never finished, and reports
// how many objects went. Bucket lifecycle rules count in whole days; this
// keeps VIDEO_RESULT_TTL as exact as on a local disk.
func (s *S3) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	old := make(chan minio.ObjectInfo)
	var listErr error
	go func() {
		defer close(old)
		for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix, Recursive: true}) {
			if obj.Err != nil {
				listErr = obj.Err
				return
			}
			if obj.LastModified.Before(cutoff) && checkKey(strings.TrimPrefix(obj.Key, s.prefix)) == nil {
				old <- obj
			}
		}
	}()
	n, total := 0, 0
	var errs []error
	for r := range s.client.RemoveObjectsWithResult(ctx, s.bucket, old, minio.RemoveObjectsOptions{}) {
		total++
		if r.Err != nil {
			errs = append(errs, r.Err)
			continue
		}
		n++
	}
	for u := range s.client.ListIncompleteUploads(ctx, s.bucket, s.prefix, true) {
		if u.Err != nil {
			errs = append(errs, u.Err)
			break
		}
		if u.Initiated.Before(cutoff) {
			if err := s.client.RemoveIncompleteUpload(ctx, s.bucket, u.Key); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if listErr != nil {
		errs = append(errs, listErr)
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("object store: sweep s3://%s/%s (%d of %d deleted): %w", s.bucket, s.prefix, n, total, errors.Join(errs...))
	}
	return n, nil
}

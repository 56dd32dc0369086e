package objstore

import (
	"context"
	"path/filepath"
	"strings"
)

// Names of the stores the service opens on one Location: each keeps its
// objects under a prefix of its own (a subdirectory, or a key prefix in
// the bucket), so that one store's Sweep never sees another's objects.
const (
	Videos = "videos"
	Assets = "assets"
)

// Location is where the object store is: a directory (Dir), or an S3
// bucket when S3 is set.
type Location struct {
	Dir string
	S3  *S3Config
}

// Open returns the store named name (Videos, Assets) at l: the
// subdirectory name of Dir, or the prefix name under the bucket's prefix.
func (l Location) Open(ctx context.Context, name string) (Store, error) {
	if l.S3 == nil {
		return NewLocal(filepath.Join(l.Dir, name))
	}
	cfg := *l.S3
	cfg.Prefix = strings.Trim(strings.Trim(cfg.Prefix, "/")+"/"+name, "/")
	return NewS3(ctx, cfg)
}

// String is where l is, for the log: no secrets.
func (l Location) String() string {
	if l.S3 == nil {
		return l.Dir
	}
	s := "s3://" + l.S3.Bucket
	if p := strings.Trim(l.S3.Prefix, "/"); p != "" {
		s += "/" + p
	}
	if l.S3.Endpoint != "" {
		s += " at " + l.S3.Endpoint
	}
	return s
}

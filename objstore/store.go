// Package objstore is the one object store of the service: video jobs'
// inputs and results, and the images of the Assets library (designs and
// backdrops), each under a name of its own (Location.Open). Redis, which
// holds the money, keeps only their records.
package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Store keeps objects where the web processes and the workers both reach
// them: Local on one machine's disk (or a volume every process mounts), S3
// in a bucket for processes on several machines with no disk in common.
type Store interface {
	// Put writes r under key, replacing what was there, and returns its size.
	Put(ctx context.Context, key string, r io.Reader) (int64, error)
	// Open reads key; a missing key is an error that wraps fs.ErrNotExist.
	Open(ctx context.Context, key string) (File, error)
	// Delete removes key; a missing key is not an error.
	Delete(ctx context.Context, key string) error
	// Path is a local file holding key for a program (ffmpeg) to read, and
	// a function to call when done with it.
	Path(ctx context.Context, key string) (string, func(), error)
	// Sweep deletes the objects last written before cutoff and reports
	// how many: results past their time to live, inputs of jobs long gone.
	Sweep(ctx context.Context, cutoff time.Time) (int, error)
}

// File is a stored object being read.
type File interface {
	io.ReadSeekCloser
	Size() int64
	ModTime() time.Time
}

// Local stores objects as files under a directory.
type Local struct{ Dir string }

// NewLocal returns a Local on dir, creating it.
func NewLocal(dir string) (*Local, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	return &Local{Dir: dir}, nil
}

// checkKey refuses keys that are not one plain name: every store keeps
// its objects side by side, and a key never climbs out of its directory.
func checkKey(key string) error {
	if key == "" || strings.ContainsAny(key, `/\`) || strings.HasPrefix(key, ".") {
		return fmt.Errorf("object store: bad key %q", key)
	}
	return nil
}

func (l *Local) file(key string) (string, error) {
	if err := checkKey(key); err != nil {
		return "", err
	}
	return filepath.Join(l.Dir, key), nil
}

func (l *Local) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	path, err := l.file(key)
	if err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(l.Dir, ".put-*")
	if err != nil {
		return 0, fmt.Errorf("object store: %w", err)
	}
	defer os.Remove(tmp.Name())
	n, err := io.Copy(tmp, readerCtx{ctx, r})
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return n, err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return n, fmt.Errorf("object store: %w", err)
	}
	return n, nil
}

type localFile struct {
	*os.File
	info fs.FileInfo
}

func (f localFile) Size() int64        { return f.info.Size() }
func (f localFile) ModTime() time.Time { return f.info.ModTime() }

func (l *Local) Open(_ context.Context, key string) (File, error) {
	path, err := l.file(key)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return localFile{f, info}, nil
}

func (l *Local) Delete(_ context.Context, key string) error {
	path, err := l.file(key)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (l *Local) Path(_ context.Context, key string) (string, func(), error) {
	path, err := l.file(key)
	if err != nil {
		return "", nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return "", nil, err
	}
	return path, func() {}, nil
}

func (l *Local) Sweep(ctx context.Context, cutoff time.Time) (int, error) {
	entries, err := os.ReadDir(l.Dir)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, e := range entries {
		if ctx.Err() != nil {
			return n, ctx.Err()
		}
		info, err := e.Info()
		if err != nil || e.IsDir() || !info.ModTime().Before(cutoff) {
			continue
		}
		if os.Remove(filepath.Join(l.Dir, e.Name())) == nil {
			n++
		}
	}
	return n, nil
}

// readerCtx stops a copy when ctx is done.
type readerCtx struct {
	ctx context.Context
	r   io.Reader
}

func (r readerCtx) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

package e2etest

import (
	"path/filepath"
	"runtime"
	"testing"

	"carphoto/internal/testenv/redistest"
)

// EnvOf is a getenv that reads kv: the settings a test gives the service
// or its configuration, and nothing of the test process's environment.
func EnvOf(kv map[string]string) func(string) string {
	return func(k string) string { return kv[k] }
}

// RepoPath is the path of elem under the repository's root (docs/samples,
// docs/examples), found from this file's place, so that a test of any
// package reads the same files.
func RepoPath(elem ...string) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join(elem...)
	}
	return filepath.Join(append([]string{filepath.Dir(file), "..", "..", ".."}, elem...)...)
}

// SideBySide lets a test run beside its package's other tests
// (t.Parallel) on a Redis of its own (redistest.Own): the embedded one, or
// a database leased on the real one. Where it can have none (a Redis
// Cluster, whose one database each test empties at its start; a server
// with only the packages' 16 databases) it runs in its turn.
func SideBySide(t *testing.T) {
	t.Helper()
	if redistest.Own(t) {
		t.Parallel()
	}
}

package api

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/imgtest"
)

// oapiCodegen is the generator an integrator's Go build runs, at the
// version the document is held to, from the Go module proxy.
const oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"

// The Go client oapi-codegen generates from site/openapi.json with its
// default options compiles unedited, and calls every operation of the
// document against a running service, the video job and its webhook
// included (testdata/goclient, a module of its own, drives it). It needs
// the Go module proxy (the generator and the client's dependencies, once
// per module cache); -short skips it.
func TestGeneratedGoClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the generated client is built from the Go module proxy")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	clip, _ := e2etest.VideoClip(t)
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "go.sum", "calls_test.go"} {
		b, err := os.ReadFile(filepath.Join("testdata", "goclient", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := filepath.Abs(e2etest.RepoPath("site", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	gocmd := func(env []string, args ...string) string {
		t.Helper()
		cmd := exec.Command(goBin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), append([]string{"GOWORK=off", "GOFLAGS=-mod=readonly"}, env...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	gocmd(nil, "run", oapiCodegen, "-package", "client", "-o", "client.gen.go", doc)
	gocmd(nil, "vet", ".")

	const admin, secret = "goclient-admin-token-0123456789", "goclient-webhook-secret-0123"
	s := e2etest.StartService(t, map[string]string{"ADMIN_TOKEN": admin, "WEBHOOK_SECRET": secret, "ALLOW_PRIVATE_URLS": "true",
		"VIDEO_DIR": t.TempDir(), "MAX_VIDEO_SECONDS": "20", "RATE_LIMIT_PER_MINUTE": "1000"})
	_, key := s.Account(t, 50)
	out := gocmd([]string{"CARPHOTO_URL=" + s.URL, "CARPHOTO_KEY=" + key, "ADMIN_TOKEN=" + admin, "WEBHOOK_SECRET=" + secret,
		"CARPHOTO_SAMPLES=" + filepath.Dir(imgtest.SamplePath("car.jpg")), "CARPHOTO_VIDEO=" + clip},
		"test", "-count=1", "-v", ".")
	t.Logf("the generated client's calls:\n%s", out)
	if n := strings.Count(out, ": 20"); !strings.Contains(out, "--- PASS: TestEveryOperation") || n < 25 {
		t.Errorf("the generated client's run did not pass every operation (%d successes)", n)
	}
}

// The TypeScript types openapi-typescript generates from site/openapi.json
// compile unedited under tsc --strict, used with openapi-fetch
// (testdata/tsclient). Where node and npm are present: the tools are
// installed from npm into a scratch directory outside the repository; it
// skips where node is absent or npm cannot install them.
func TestGeneratedTypeScriptClient(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the TypeScript tools come from npm")
	}
	dir := t.TempDir()
	run := npmTools(t, dir, "openapi-typescript@7.13.0", "typescript@5.9.3", "openapi-fetch@0.17.0")
	for _, name := range []string{"main.ts", "tsconfig.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", "tsclient", name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	doc, err := filepath.Abs(e2etest.RepoPath("site", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	if out, err := run("openapi-typescript", doc, "-o", "schema.d.ts"); err != nil {
		t.Fatalf("openapi-typescript: %v\n%s", err, out)
	}
	if out, err := run("tsc", "-p", "tsconfig.json"); err != nil {
		t.Fatalf("the generated TypeScript does not compile: %v\n%s", err, out)
	}
}

// npmTools installs pkgs from npm into dir, a scratch directory outside
// the repository, and returns a runner of their commands there; it skips
// the test where node or npm is absent, or npm cannot install them.
func npmTools(t *testing.T, dir string, pkgs ...string) func(tool string, args ...string) (string, error) {
	t.Helper()
	npm, err := exec.LookPath("npm")
	if _, nerr := exec.LookPath("node"); err != nil || nerr != nil {
		t.Skip("no node and npm: the tools from npm are not run")
	}
	run := func(name string, args ...string) (string, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(npm, append([]string{"install", "--no-audit", "--no-fund", "--loglevel=error"}, pkgs...)...); err != nil {
		t.Skipf("npm could not install %v: %v\n%s", pkgs, err, out)
	}
	return func(tool string, args ...string) (string, error) {
		return run(filepath.Join(dir, "node_modules", ".bin", tool), args...)
	}
}

// The linters integrators run on a document find no error in
// site/openapi.json: Redocly's recommended rules with unused components
// an error, and Spectral's OpenAPI rules. Where node and npm are present.
func TestDocumentLints(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the linters come from npm")
	}
	dir := t.TempDir()
	run := npmTools(t, dir, "@redocly/cli@2.77.0", "@stoplight/spectral-cli@6.16.3")
	doc, err := filepath.Abs(e2etest.RepoPath("site", "openapi.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, text := range map[string]string{
		"redocly.yaml":   "extends:\n  - recommended\nrules:\n  no-unused-components: error\n",
		".spectral.yaml": "extends: [\"spectral:oas\"]\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := run("redocly", "lint", "--config", filepath.Join(dir, "redocly.yaml"), doc)
	if err != nil {
		t.Errorf("redocly lint: %v\n%s", err, out)
	}
	t.Logf("redocly lint:\n%s", out)
	out, err = run("spectral", "lint", "--fail-severity=error", "--ruleset", filepath.Join(dir, ".spectral.yaml"), doc)
	if err != nil {
		t.Errorf("spectral lint: %v\n%s", err, out)
	}
	t.Logf("spectral lint:\n%s", out)
}

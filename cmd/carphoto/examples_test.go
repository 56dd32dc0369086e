package main

import (
	"bytes"
	"context"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestExamplesRun runs each client in docs/examples against the embedded
// service, where its interpreter is installed. The rate limit is set so
// every client meets a 429 and must wait out its Retry-After: a client
// makes 9 calls; with a burst of 7 and one more every 8.6 s, it meets one
// unless its calls take over 17 s (with 8, one every 7.5 s, a client slowed
// past 7.5 s by a loaded machine met none).
func TestExamplesRun(t *testing.T) {
	s := startService(t, map[string]string{"RATE_LIMIT_PER_MINUTE": "7"})
	photo, _ := photoFile(t)
	logo := filepath.Join(t.TempDir(), "dealer-plate.png")
	if err := os.WriteFile(logo, twoColourLogo(t), 0o644); err != nil {
		t.Fatal(err)
	}
	dir, err := filepath.Abs(filepath.Join("..", "..", "docs", "examples"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		cmd   []string
		check []string // a command that must succeed for the example to run
	}{
		{"curl", []string{"bash", "curl.sh"}, []string{"curl", "--version"}},
		{"python", []string{"python3", "client.py"}, []string{"python3", "-c", "import requests"}},
		{"node", []string{"node", "client.mjs"}, []string{"node", "-e", "process.exit(+process.versions.node.split('.')[0] >= 18 ? 0 : 1)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := exec.Command(c.check[0], c.check[1:]...).Run(); err != nil {
				t.Skipf("%s is not available here (%s: %v): its example is not run", c.name, strings.Join(c.check, " "), err)
			}
			t.Parallel()
			id, key := s.account(t, 20)
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, c.cmd[0], c.cmd[1:]...)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), "CARPHOTO_URL="+s.url, "CARPHOTO_KEY="+key, "PHOTO="+photo, "LOGO="+logo, "OUT="+out)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(c.cmd, " "), err, stdout.String(), stderr.String())
			}
			for _, f := range []string{"blurred.jpg", "logo-file.jpg", "logo-asset.jpg", "shadow.png"} {
				b, err := os.ReadFile(filepath.Join(out, f))
				if err != nil {
					t.Errorf("%s: %v", f, err)
					continue
				}
				if _, _, err := image.DecodeConfig(bytes.NewReader(b)); err != nil {
					t.Errorf("%s is not an image: %v", f, err)
				}
			}
			if got := s.credits(t, id); got != 16 {
				t.Errorf("balance %d, want 16: four photo calls charged once each", got)
			}
			if !strings.Contains(strings.ToLower(stderr.String()), "retry") {
				t.Errorf("the client never retried its 429:\nstderr:\n%s", stderr.String())
			}
			for _, want := range []string{"blur-plates: plates", "asset saved:", "asset deleted:", "car-shadow: plates -"} {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("output lacks %q:\n%s", want, stdout.String())
				}
			}
		})
	}
}

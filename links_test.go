package carphoto_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A clone is all a newcomer has: every link in the README and the docs
// leads to a file of the repository that is there (or to a heading of the
// page it is on), never to a web page or a path outside the repository;
// and no document is named by a path outside it.

var (
	mdLink    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
	mdRef     = regexp.MustCompile(`(?m)^\s*\[[^\]]+\]:\s*(\S+)`)
	codeSpan  = regexp.MustCompile("`([^`\\s]+\\.md)`")
	mdHeading = regexp.MustCompile(`(?m)^#{1,6}\s+(.+?)\s*$`)
)

func TestDocLinksStayInRepository(t *testing.T) {
	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	pages := []string{"README.md"}
	err = filepath.WalkDir("docs", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			pages = append(pages, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	links := 0
	for _, page := range pages {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		var targets []string
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, m := range mdRef.FindAllStringSubmatch(text, -1) {
			targets = append(targets, m[1])
		}
		for _, target := range targets {
			links++
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				t.Errorf("%s: link %s leaves the repository", page, target)
				continue
			}
			file, anchor, _ := strings.Cut(target, "#")
			if file == "" {
				if !hasAnchor(text, anchor) {
					t.Errorf("%s: link #%s: no such heading on the page", page, anchor)
				}
				continue
			}
			checkInside(t, root, page, "link", file)
		}
		for _, m := range codeSpan.FindAllStringSubmatch(text, -1) {
			if strings.Contains(m[1], "/") && !strings.Contains(m[1], "://") {
				checkInside(t, root, page, "document", m[1])
			}
		}
	}
	if links < 10 {
		t.Errorf("%d links in %d pages: the link pattern finds too few", links, len(pages))
	}
}

// checkInside reports a path named on page that resolves outside the
// repository or to nothing. Paths resolve from the page's folder, or from
// the repository's root where the page's folder has no such file (the
// docs name files as from the root too, `docs/samples/car.jpg`).
func checkInside(t *testing.T, root, page, what, target string) {
	t.Helper()
	fromPage := filepath.Join(root, filepath.Dir(page), filepath.FromSlash(target))
	fromRoot := filepath.Join(root, filepath.FromSlash(target))
	for _, p := range []string{fromPage, fromRoot} {
		if rel, err := filepath.Rel(root, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			if p == fromPage {
				t.Errorf("%s: %s %s is outside the repository", page, what, target)
				return
			}
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return
		}
	}
	t.Errorf("%s: %s %s: no such file in the repository", page, what, target)
}

// hasAnchor reports whether text has a heading whose GitHub anchor is a.
func hasAnchor(text, a string) bool {
	for _, m := range mdHeading.FindAllStringSubmatch(text, -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127:
				b.WriteRune(r)
			}
		}
		if b.String() == a {
			return true
		}
	}
	return false
}

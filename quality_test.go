package carphoto_test

import (
	"os"
	"path"
	"regexp"
	"strings"
	"testing"
)

// The README's quality table says what docs/BENCHMARKS.md's first table
// says: every row of it stands there with the same figures, so that a
// figure is changed in one place, with its command, and copied.
func TestReadmeQualityIsBenchmarksFirstTable(t *testing.T) {
	readme := tableAfter(t, "README.md", "## Quality today")
	bench := tableAfter(t, "docs/BENCHMARKS.md", "# Benchmarks")
	if len(readme) < 5 {
		t.Fatalf("README's quality table: %d rows, want the table under \"## Quality today\"", len(readme))
	}
	for what, row := range readme {
		b, ok := bench[what]
		if !ok {
			t.Errorf("README's quality row %q: not in docs/BENCHMARKS.md's first table", what)
			continue
		}
		for i, cell := range row {
			if i >= len(b) || cell != b[i] {
				t.Errorf("README's quality row %q says %q; docs/BENCHMARKS.md's says %q", what, cell, b[min(i, len(b)-1)])
			}
		}
	}
}

var mdLinkText = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)

// tableAfter is the first table after heading on page, by its first
// cell: the next two cells (the figure and the photos), links written as
// the file they name, so that a link from the README and one from docs/
// to the same file read the same.
func tableAfter(t *testing.T, page, heading string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	_, text, ok := strings.Cut(string(data), heading+"\n")
	if !ok {
		t.Fatalf("%s: no heading %q", page, heading)
	}
	rows := map[string][]string{}
	in := false
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(line, "|") {
			if in {
				break
			}
			continue
		}
		in = true
		line = mdLinkText.ReplaceAllStringFunc(line, func(l string) string {
			return path.Base(mdLinkText.FindStringSubmatch(l)[1])
		})
		cells := strings.Split(strings.Trim(strings.ReplaceAll(line, `\|`, "¦"), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if len(cells) < 3 || strings.HasPrefix(cells[0], "---") || cells[0] == "what" {
			continue
		}
		rows[cells[0]] = cells[1:3]
	}
	return rows
}

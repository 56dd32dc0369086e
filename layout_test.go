package carphoto_test

import (
	"bufio"
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The house's rules, read from the packages' own (non-test) imports:
// imageops is the one door to the image work, and the test helpers stay
// out of the product. A newcomer who adds an arrow that breaks one is told
// here, by name.

// toolPackages may reach into imageops' rooms and the test helpers: the
// lab (benchmarks and vision measurements), the research tools and the
// helpers themselves.
var toolPackages = []string{"carphoto/train/", "carphoto/cmd/carphoto-lab/", "carphoto/internal/testenv/"}

func TestImportRules(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	tool := func(pkg string) bool {
		return slices.ContainsFunc(toolPackages, func(p string) bool { return strings.HasPrefix(pkg+"/", p) || pkg == p })
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		pkg, imports := fields[0], fields[1:]
		for _, imp := range imports {
			if !strings.HasPrefix(imp, "carphoto/") {
				continue
			}
			switch {
			case strings.HasPrefix(imp, "carphoto/internal/testenv/") && !tool(pkg):
				t.Errorf("%s imports the test helper %s: only tests, train/ and the lab may", pkg, imp)
			case strings.HasPrefix(imp, "carphoto/imageops/") && !strings.HasPrefix(pkg, "carphoto/imageops") && !tool(pkg):
				t.Errorf("%s imports %s: outside imageops only train/, the lab and the test helpers import its rooms; go through imageops", pkg, imp)
			case strings.HasPrefix(pkg, "carphoto/video") && (imp == "carphoto/imageops/plates" || imp == "carphoto/imageops/paint"):
				t.Errorf("%s imports %s: video works through imageops' frame operation", pkg, imp)
			case strings.HasPrefix(pkg, "carphoto/imageops") && !strings.HasPrefix(imp, "carphoto/imageops"):
				if imp != "carphoto" {
					t.Errorf("%s imports %s: imageops knows nothing of the service around it", pkg, imp)
				}
			}
		}
	}
}

// The service binary links none of the lab: no test helper, no benchmark,
// no research tool.
func TestServiceLinksNoLab(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH")
	}
	out, err := exec.Command("go", "list", "-deps", "./cmd/carphoto").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, lab := range toolPackages {
			if strings.HasPrefix(pkg+"/", lab) {
				t.Errorf("cmd/carphoto links %s: the service binary takes nothing from the lab (%s)", pkg, lab)
			}
		}
	}
}

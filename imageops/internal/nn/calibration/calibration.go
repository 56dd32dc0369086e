//go:build measure

// Package calibration writes the calibration.go of a network whose layers
// run on nn's integer kernels: the input range of each layer, measured by
// the network's calibration test on training photos.
package calibration

import (
	"fmt"
	"go/format"
	"os"
	"strings"

	"carphoto/imageops/internal/nn"
)

// Write writes file, Go source of package pkg declaring
// calibrated: each integer layer's input range rs[i] (a zero range keeps
// it in float), named names[i], with the range of all its inputs seen[i]
// as a comment; about is the declaration's doc comment, one line per
// line, without the slashes. The calibration tests of the networks write
// their calibration.go with it.
func Write(file, pkg, about string, names []string, rs []nn.Range, seen []nn.Sampler) error {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport \"carphoto/imageops/internal/nn\"\n\n", pkg)
	for _, l := range strings.Split(strings.TrimSpace(about), "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	b.WriteString("var calibrated = []nn.Range{\n")
	for i, r := range rs {
		fmt.Fprintf(&b, "\t{Lo: %g, Hi: %g}, // %d %s: all %g to %g\n", r.Lo, r.Hi, i, names[i], seen[i].All.Lo, seen[i].All.Hi)
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return err
	}
	return os.WriteFile(file, src, 0o644)
}

// WriteChannels writes file, Go source of package pkg declaring
// calibratedChannels: for each layer index in layers (intLayers's order),
// the input range of each of its channels, seen[i].Chans; about is the
// declaration's doc comment as for Write. A layer whose channels' scales
// differ by orders of magnitude runs on integers with these where one
// range for all its channels would give most of them a handful of steps.
func WriteChannels(file, pkg, about string, names []string, layers []int, seen []nn.Sampler) error {
	var b strings.Builder
	fmt.Fprintf(&b, "package %s\n\nimport \"carphoto/imageops/internal/nn\"\n\n", pkg)
	for _, l := range strings.Split(strings.TrimSpace(about), "\n") {
		fmt.Fprintf(&b, "// %s\n", l)
	}
	b.WriteString("var calibratedChannels = map[int][]nn.Range{\n")
	for _, i := range layers {
		fmt.Fprintf(&b, "\t%d: { // %s\n", i, names[i])
		for _, r := range seen[i].Chans {
			fmt.Fprintf(&b, "\t\t{Lo: %g, Hi: %g},\n", r.Lo, r.Hi)
		}
		b.WriteString("\t},\n")
	}
	b.WriteString("}\n")
	src, err := format.Source([]byte(b.String()))
	if err != nil {
		return err
	}
	return os.WriteFile(file, src, 0o644)
}

//go:build platesmine || platestune || platesaudit

package plates

import (
	"context"
	"encoding/json"
	"image"
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"testing"
)

// labelled is a photo of the shared plate sets with its labelled boxes and
// the plates its labels miss, found by review (train/plates/unlabelled.json;
// training and validation photos only).
type labelled struct {
	set, file string
	img       image.Image
	boxes     []Box
	missed    []Box
}

// labelledPhotos decodes the photos of a plate set whose file names keep
// says to read; the others (the held-out split, for the tools) are not
// opened.
func labelledPhotos(t *testing.T, set string, keep func(name string) bool) []labelled {
	t.Helper()
	dir := filepath.Join("../../../shared/datasets", set)
	data, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		t.Fatal(err)
	}
	var labels []struct {
		File   string `json:"file"`
		Plates []Box  `json:"plates"`
	}
	if err := json.Unmarshal(data, &labels); err != nil {
		t.Fatal(err)
	}
	var audit []struct {
		Set, File string
		Box       [4]float64
	}
	data, err = os.ReadFile("../../train/plates/unlabelled.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &audit); err != nil {
		t.Fatal(err)
	}
	var out []labelled
	for _, e := range labels {
		if !keep(e.File) {
			continue
		}
		r, err := os.Open(filepath.Join(dir, e.File))
		if err != nil {
			t.Fatal(err)
		}
		img, _, err := image.Decode(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		var missed []Box
		for _, a := range audit {
			if a.Set == set && a.File == e.File {
				missed = append(missed, Box{X: a.Box[0], Y: a.Box[1], W: a.Box[2] - a.Box[0], H: a.Box[3] - a.Box[1]})
			}
		}
		out = append(out, labelled{set, e.File, img, e.Plates, missed})
	}
	return out
}

// proposed runs the first stage on p's photo: its proposals from both
// looks, photo pixels.
func (p labelled) proposed(t *testing.T) []box {
	t.Helper()
	n, err := embeddedNet()
	if err != nil {
		t.Fatal(err)
	}
	props, err := n.propose(context.Background(), p.img)
	if err != nil {
		t.Fatal(err)
	}
	return props
}

// judged runs both stages on p's photo: the jury's judgement of each
// proposal, before any threshold.
func (p labelled) judged(t *testing.T) []verified {
	t.Helper()
	vs, err := embeddedJury()
	if err != nil {
		t.Fatal(err)
	}
	j, err := vs.verify(context.Background(), p.img, p.proposed(t))
	if err != nil {
		t.Fatal(err)
	}
	return j
}

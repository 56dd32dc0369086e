package plates

import (
	"path/filepath"
	"slices"
	"testing"

	"carphoto/imageops/textrec"
	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// TestWordRule: a word is letters alone, wordLetters or more, read clearly;
// a plate's characters, a digit among them, a short or unclear reading are
// not.
func TestWordRule(t *testing.T) {
	for _, c := range []struct {
		text string
		conf float64
		want bool
	}{
		{"POLICE", 0.97, true},
		{"TOYOTA", 0.95, true},
		{"Citybus", 0.92, true},
		{"POLICE", 0.8, false}, // read unclearly: stays hidden
		{"KIA", 0.99, false},   // too short to tell from a plate's letters
		{"BG44FC", 0.99, false},
		{"5511 GYL", 0.95, false},
		{"", 0, false},
	} {
		conf := slices.Repeat([]float64{c.conf}, len([]rune(c.text)))
		if got := isWord(readOf([]textrec.Reading{{Text: c.text, Conf: conf}})); got != c.want {
			t.Errorf("%q at %.2f: word %v, want %v", c.text, c.conf, got, c.want)
		}
	}
}

// TestLetteringLeftAlone: on a police car (a validation photo of the web
// set) the word "POLICE" on the boot lid, which the verifiers score 0.96,
// is not reported; the plate below it is. Without the reader (DetectUnread)
// both are.
func TestLetteringLeftAlone(t *testing.T) {
	img := imgtest.DecodeFile(t, filepath.Join(datasets.Set(t, "plates-web-cc0"), "images", "plates-web-cc0-0212.jpg"))
	found, err := Detect(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	unread, err := DetectUnread(t.Context(), img)
	if err != nil {
		t.Fatal(err)
	}
	// The plate, labelled at x 143–211, y 171–208 (the set's labels.json);
	// the word above it at about x 111–251, y 63–108.
	plate := Box{X: 143, Y: 171, W: 68, H: 37}
	word := Box{X: 111, Y: 63, W: 140, H: 45}
	on := func(ps []Plate, b Box) bool {
		return slices.ContainsFunc(ps, func(p Plate) bool { return b.IoU(p.Quad) >= 0.3 })
	}
	if !on(found, plate) || on(found, word) {
		t.Errorf("found %d plates: on the plate %v, on the word %v; want the plate alone", len(found), on(found, plate), on(found, word))
	}
	if !on(unread, word) {
		t.Errorf("without the reader: no detection on the word; the test no longer shows the rule")
	}
}

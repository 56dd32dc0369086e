package plates

import (
	_ "image/jpeg"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"carphoto/internal/testenv/datasets"
	"carphoto/internal/testenv/imgtest"
)

// BenchmarkReads times the reader's part of plate finding alone, photo by
// photo, on 40 held-out web photos: the lines each one reads (at most
// maxReads and readWidth pixels of line) and the judge. It reports the
// mean and the slowest photo's time and its reads (one core: go test
// ./imageops/plates -run '^$' -bench Reads -benchtime 3x -cpu 1).
func BenchmarkReads(b *testing.B) {
	files, err := filepath.Glob(filepath.Join(datasets.Dir(), "plates-web-cc0", "images", "*.jpg"))
	if err != nil || len(files) == 0 {
		b.Skip("no plates-web-cc0 photos")
	}
	st, err := networks(b.Context(), nil)
	if err != nil {
		b.Fatal(err)
	}
	s := DefaultSettings()
	type photo struct {
		v      view
		judged []verified
		cands  []candidate
	}
	var photos []photo
	for _, fn := range files {
		if !datasets.HeldOut(filepath.Base(fn)) || len(photos) == 40 {
			continue
		}
		img := imgtest.DecodeFile(b, fn)
		props, err := st.net.proposeAll(b.Context(), img, 1, img.Bounds().Sub(img.Bounds().Min), subImages(img), s)
		if err != nil {
			b.Fatal(err)
		}
		v := wholeView(img)
		judged, err := st.verify(b.Context(), v, props, s)
		if err != nil {
			b.Fatal(err)
		}
		photos = append(photos, photo{v, judged, s.Judge.candidates(judged)})
	}
	if _, err := readAll(b.Context(), photos[0].v, photos[0].judged, photos[0].cands); err != nil {
		b.Fatal(err) // the reader's network loaded before the clock starts
	}
	var times []time.Duration
	slowest := 0
	for b.Loop() {
		for _, p := range photos {
			start := time.Now()
			if _, err := readAll(b.Context(), p.v, p.judged, p.cands); err != nil {
				b.Fatal(err)
			}
			d := time.Since(start)
			times = append(times, d)
			if d > times[slowest] {
				slowest = len(times) - 1
			}
		}
	}
	var sum time.Duration
	for _, d := range times {
		sum += d
	}
	worst := photos[slowest%len(photos)]
	b.ReportMetric(float64(sum.Microseconds())/1000/float64(len(times)), "ms/photo")
	b.ReportMetric(float64(slices.Max(times).Microseconds())/1000, "max-ms/photo")
	b.ReportMetric(float64(len(worst.cands)), "reads-slowest")
}

package bench

import (
	"carphoto/imageops"
	"carphoto/internal/testenv/datasets"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"image"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"carphoto/imageops/codec"
	"carphoto/imageops/cutout"
)

// Cutout implements `carphoto bench cutout DIR`: over DIR/labels.json (the
// cars-seg layout) it reports the mean IoU (alpha >= 128 against the mask, and against
// the mask's main car alone), the mean boundary F-score at 2 px and the contact-band
// IoU (median, p10; contactBandIoU) of a split (the held-out one by default), then the
// time p50 of Cut on a 12-megapixel photo.
func Cutout(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench cutout", flag.ContinueOnError)
	fs.SetOutput(stdout)
	split := fs.String("split", "heldout", "images to score: heldout, tune (every other image), val (a fifth of tune) or all")
	photo := fs.String("photo", "", "12 MP timing photo (default: a held-out image enlarged to 4000x3000)")
	runs := fs.Int("n", 5, "timed runs on the 12 MP photo (0 skips timing)")
	verbose := fs.Bool("v", false, "print every image's scores")
	def := cutout.DefaultSettings()
	keep := fs.Float64("keep", def.KeepBlobs, "clean-up: keep blobs this share of the largest (1: the one car)")
	mirror := fs.Bool("mirror", def.Mirror, "run the network on the photo and its mirror image, the maps averaged")
	overlay := fs.String("overlay", "", "write each image's label (green) and cut-out (red) outlines, contact band lit, to this directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return errors.New("bench cutout: usage: carphoto bench cutout [-split heldout|val|all] [-photo FILE] [-n N] DIR")
	}
	dir := fs.Arg(0)
	if err := fs.Parse(fs.Args()[1:]); err != nil { // flags may also follow DIR
		return err
	}
	raw, err := os.ReadFile(filepath.Join(dir, "labels.json"))
	if err != nil {
		return fmt.Errorf("bench cutout: %w", err)
	}
	var labels []struct{ File, Mask string }
	if err := json.Unmarshal(raw, &labels); err != nil {
		return fmt.Errorf("bench cutout: labels.json: %w", err)
	}
	var ious, bfs, bands, extra, missed, carIoUs []float64
	var names, cut []string
	var first string
	for _, l := range labels {
		name := filepath.Base(l.File)
		if !cutoutInSplit(*split, name) {
			continue
		}
		if first == "" {
			first = filepath.Join(dir, l.File)
		}
		img, err := decodeFile(ctx, filepath.Join(dir, l.File))
		if err != nil {
			return fmt.Errorf("bench cutout: %w", err)
		}
		mask, err := decodeFile(ctx, filepath.Join(dir, l.Mask))
		if err != nil {
			return fmt.Errorf("bench cutout: %w", err)
		}
		s := def
		s.KeepBlobs = *keep
		s.Mirror = *mirror
		pass, err := cutout.NetworkPass(ctx, img.Image, s)
		if err != nil {
			return fmt.Errorf("bench cutout: %s: %w", name, err)
		}
		m, err := pass.Matte(ctx, s)
		if err != nil {
			return fmt.Errorf("bench cutout: %s: %w", name, err)
		}
		iou, bf := datasets.IoU(m, mask.Image), datasets.BoundaryF(m, mask.Image, 2)
		carIoUs = append(carIoUs, datasets.IoU(m, datasets.MainCar(mask.Image)))
		cb := contactBandIoU(m, mask.Image)
		if *overlay != "" {
			if err := os.MkdirAll(*overlay, 0o755); err != nil {
				return fmt.Errorf("bench cutout: %w", err)
			}
			out := filepath.Join(*overlay, strings.TrimSuffix(name, filepath.Ext(name))+".png")
			if err := cutoutWritePNG(out, bandOverlay(img.Image, m, mask.Image), nil); err != nil {
				return fmt.Errorf("bench cutout: %w", err)
			}
		}
		ious, bfs, bands, names = append(ious, iou), append(bfs, bf), append(bands, cb.IoU), append(names, name)
		extra, missed = append(extra, cb.Extra), append(missed, cb.Missed)
		frame := ""
		if cb.FrameCut {
			frame = "\tcut by the frame"
			cut = append(cut, fmt.Sprintf("%s %.3f", name, cb.IoU))
		}
		if *verbose {
			fmt.Fprintf(stdout, "%s\tIoU %.4f\tboundary F %.4f\tcontact band IoU %.4f (extra %.3f, missed %.3f)%s\n",
				name, iou, bf, cb.IoU, cb.Extra, cb.Missed, frame)
		}
	}
	if len(ious) == 0 {
		return fmt.Errorf("bench cutout: no %s images in %s", *split, dir)
	}
	fmt.Fprintf(stdout, "split %s: %d images\nmean IoU %.4f (min %.4f)\nmean boundary F-score (2 px) %.4f\n",
		*split, len(ious), cutoutMean(ious), slices.Min(ious), cutoutMean(bfs))
	fmt.Fprintf(stdout, "mean IoU against the main labelled car (the one car; cars-seg labels every car) %.4f (min %.4f)\n",
		cutoutMean(carIoUs), slices.Min(carIoUs))
	below := 0
	for _, v := range bands {
		if v < 0.9 {
			below++
		}
	}
	sorted := slices.Clone(bands)
	fmt.Fprintf(stdout, "contact band IoU: median %.4f, p10 %.4f, min %.4f, %d of %d below 0.9; of the band, mean extra %.3f, missed %.3f\n",
		quantile(sorted, 0.5), quantile(sorted, 0.1), sorted[0], below, len(bands), cutoutMean(extra), cutoutMean(missed))
	if len(cut) > 0 {
		fmt.Fprintf(stdout, "cars cut by the frame (contact band IoU): %s\n", strings.Join(cut, ", "))
	}
	worst := make([]int, len(ious))
	for i := range worst {
		worst[i] = i
	}
	slices.SortStableFunc(worst, func(a, b int) int { return cmp.Compare(ious[a], ious[b]) })
	fmt.Fprintf(stdout, "worst 5:")
	for _, i := range worst[:min(5, len(worst))] {
		fmt.Fprintf(stdout, " %s %.3f/%.3f", names[i], ious[i], bfs[i])
	}
	fmt.Fprintf(stdout, " (IoU/boundary F)\n")
	if *runs == 0 {
		return nil
	}

	var big image.Image
	if *photo != "" {
		p, err := decodeFile(ctx, *photo)
		if err != nil {
			return fmt.Errorf("bench cutout: %w", err)
		}
		big = p.Image
	} else {
		p, err := decodeFile(ctx, first)
		if err != nil {
			return fmt.Errorf("bench cutout: %w", err)
		}
		big = resized(p.Image, 4000, 3000)
	}
	// Wall time, and the process's CPU time (user + system, GC included), which says
	// what the work costs when other processes share the cores.
	var wall, cpu []time.Duration
	for range *runs {
		start, startCPU := time.Now(), CPUTime()
		if _, err := cutout.Cut(ctx, big); err != nil {
			return fmt.Errorf("bench cutout: %w", err)
		}
		wall, cpu = append(wall, time.Since(start)), append(cpu, CPUTime()-startCPU)
	}
	slices.Sort(wall)
	slices.Sort(cpu)
	b := big.Bounds()
	fmt.Fprintf(stdout, "Cut on %dx%d (%.1f MP), %d runs: wall p50 %d ms (min %d, max %d), CPU p50 %d ms (networks: %s)\n",
		b.Dx(), b.Dy(), float64(b.Dx()*b.Dy())/1e6, len(wall), wall[len(wall)/2].Milliseconds(),
		wall[0].Milliseconds(), wall[len(wall)-1].Milliseconds(), cpu[len(cpu)/2].Milliseconds(), imageops.Arithmetic())
	return nil
}

// cutoutInSplit says whether a cars-seg image belongs to the named split. "val" is the
// validation split the old small network's cut-out was tuned on,
// inside the non-held-out images; "tune" is every non-held-out image, which the
// clean-up and refinement were tuned on and U²-Net-p was fine-tuned on (all but "val").
func cutoutInSplit(split, name string) bool {
	switch split {
	case "heldout":
		return datasets.HeldOut(name)
	case "val":
		h := fnv.New32a()
		h.Write([]byte(name))
		return !datasets.HeldOut(name) && h.Sum32()%7 == 3
	case "tune":
		return !datasets.HeldOut(name)
	}
	return true
}

// cutoutMean is the arithmetic mean of xs.
func cutoutMean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// cutoutWritePNG writes img to path as a PNG with the ICC profile icc (nil for none).
func cutoutWritePNG(path string, img image.Image, icc []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := codec.EncodePNG(f, img, icc); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package bench

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/pprof"
	"time"

	"carphoto/imageops"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
	"carphoto/internal/testenv/benchphoto"
)

// Codec times blur-plates on one JPEG three ways, alternating in
// one run: the block path (imageops.Process on a baseline JPEG), the
// full path (fullPath: decode, find, hide, encode), and
// `djpeg | cjpeg -quality 90` (libjpeg-turbo, when installed), the
// decode+encode a user would compare with. It prints CPU-time medians and
// ratios; --cpuprofile records the block path's runs.
func Codec(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("bench codec", flag.ContinueOnError)
	fs.SetOutput(stdout)
	n := fs.Int("n", 7, "rounds (each runs the three once)")
	mp := fs.Float64("scale-to-mp", 0, "upscale the photo to this many megapixels first (e.g. 12)")
	grain := fs.Int("grain", 0, "after upscaling, add noise of ±N levels, so the file is as dense as a camera's (an upscaled photo is smoother)")
	profile := fs.String("cpuprofile", "", "write a CPU profile of the runs to this file, labelled path=block|full (go tool pprof -tagfocus path=block)")
	save := fs.String("save", "", "also write the photo measured (after -scale-to-mp and -grain) to this file, e.g. for BLOCK_BENCH_JPEG")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return errors.New("bench codec: give one JPEG file")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	if *mp > 0 || *grain > 0 {
		if data, err = benchphoto.Enlarge(ctx, data, *mp, *grain); err != nil {
			return err
		}
	}
	w, h, err := ImageSize(data)
	if err != nil {
		return err
	}
	if *save != "" {
		if err := os.WriteFile(*save, data, 0o644); err != nil {
			return err
		}
	}
	djpeg, errD := exec.LookPath("djpeg")
	cjpeg, errC := exec.LookPath("cjpeg")
	pipe := errD == nil && errC == nil
	tmp := ""
	if pipe {
		f, err := os.CreateTemp("", "bench-codec-*.jpg")
		if err != nil {
			return err
		}
		tmp = f.Name()
		defer os.Remove(tmp)
		if _, err := f.Write(data); err != nil {
			return err
		}
		f.Close()
	}
	in := imageops.Input{Photo: data, Limits: toolLimits}
	p := imageops.Params{Op: imageops.BlurPlates, Style: "blur"}
	if *profile != "" {
		prof, err := os.Create(*profile)
		if err != nil {
			return err
		}
		defer prof.Close()
		if err := pprof.StartCPUProfile(prof); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	// labelled runs the path with its profile label.
	labelled := func(path string, f func(context.Context) (*imageops.Output, error)) (res *imageops.Output, err error) {
		pprof.Do(ctx, pprof.Labels("path", path), func(ctx context.Context) { res, err = f(ctx) })
		return res, err
	}
	var block, full, ext []float64
	var blockBytes, fullBytes, plates, fullPlates int
	for i := 0; i < *n; i++ {
		c0 := CPUTime()
		res, err := labelled("block", func(ctx context.Context) (*imageops.Output, error) {
			return imageops.Process(ctx, in, p)
		})
		c1 := CPUTime()
		if err != nil {
			return fmt.Errorf("block path: %w", err)
		}
		block = append(block, Millis(c1-c0))
		blockBytes, plates = len(res.Body), res.PlatesFound

		c0 = CPUTime()
		res, err = labelled("full", func(ctx context.Context) (*imageops.Output, error) {
			return fullPath(ctx, data)
		})
		c1 = CPUTime()
		if err != nil {
			return fmt.Errorf("full path: %w", err)
		}
		full = append(full, Millis(c1-c0))
		fullBytes, fullPlates = len(res.Body), res.PlatesFound

		if pipe {
			d, err := pipeCPU(ctx, djpeg, cjpeg, tmp)
			if err != nil {
				return fmt.Errorf("djpeg | cjpeg: %w", err)
			}
			ext = append(ext, Millis(d))
		}
	}
	fmt.Fprintf(stdout, "%s: %d×%d (%.1f MP), %d bytes, %d rounds, CPU ms (median)\n",
		fs.Arg(0), w, h, float64(w*h)/1e6, len(data), *n)
	fmt.Fprintf(stdout, "  block path   %7.1f ms  (%d plate(s), answer %d bytes)\n", Percentile(block, 50), plates, blockBytes)
	fmt.Fprintf(stdout, "  full path    %7.1f ms  (%d plate(s), answer %d bytes)\n", Percentile(full, 50), fullPlates, fullBytes)
	if pipe {
		e := Percentile(ext, 50)
		fmt.Fprintf(stdout, "  djpeg|cjpeg  %7.1f ms  (-quality 90)\n", e)
		fmt.Fprintf(stdout, "  block / djpeg|cjpeg = %.2f×, full / djpeg|cjpeg = %.2f×, block / full = %.2f×\n",
			Percentile(block, 50)/e, Percentile(full, 50)/e, Percentile(block, 50)/Percentile(full, 50))
	} else {
		fmt.Fprintf(stdout, "  djpeg|cjpeg  skipped: djpeg and cjpeg not installed (apt-get install libjpeg-turbo-progs)\n")
		fmt.Fprintf(stdout, "  block / full = %.2f×\n", Percentile(block, 50)/Percentile(full, 50))
	}
	return nil
}

// pipeCPU runs `djpeg FILE | cjpeg -quality 90 > /dev/null` and returns
// the CPU time (user + system) of both processes.
func pipeCPU(ctx context.Context, djpeg, cjpeg, file string) (time.Duration, error) {
	dec := exec.CommandContext(ctx, djpeg, file)
	enc := exec.CommandContext(ctx, cjpeg, "-quality", "90")
	r, err := dec.StdoutPipe()
	if err != nil {
		return 0, err
	}
	enc.Stdin = r
	enc.Stdout = io.Discard
	if err := enc.Start(); err != nil {
		return 0, err
	}
	if err := dec.Run(); err != nil {
		return 0, err
	}
	if err := enc.Wait(); err != nil {
		return 0, err
	}
	cpu := func(c *exec.Cmd) time.Duration { return c.ProcessState.UserTime() + c.ProcessState.SystemTime() }
	return cpu(dec) + cpu(enc), nil
}

// fullPath is blur-plates as the service answers a photo its block path
// does not edit: the photo decoded, its plates found and blurred in place,
// the whole encoded again as a JPEG at the input's quality (within 70 to
// 95; 90 for a photo without one).
func fullPath(ctx context.Context, data []byte) (*imageops.Output, error) {
	photo, err := codec.Decode(ctx, data, toolLimits)
	if err != nil {
		return nil, err
	}
	found, err := plates.Detect(ctx, photo.Image)
	if err != nil {
		return nil, err
	}
	quads := make([]plates.Quad, len(found))
	for i, f := range found {
		quads[i] = f.Quad
	}
	img := photo.Image
	if len(quads) > 0 {
		if img, err = paint.HidePlatesInPlace(ctx, photo.Image, quads, paint.StyleBlur); err != nil {
			return nil, err
		}
	}
	q := 90
	if photo.Quality != 0 {
		q = min(max(photo.Quality, 70), 95)
	}
	var buf bytes.Buffer
	if err := codec.EncodeJPEG(&buf, img, q, photo.ICC); err != nil {
		return nil, err
	}
	return &imageops.Output{ContentType: "image/jpeg", Body: buf.Bytes(), PlatesFound: len(found)}, nil
}

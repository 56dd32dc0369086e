package video

import (
	"context"
	"errors"
	"fmt"
	"image"
	"io"
	"math"

	"carphoto/imageops"
)

// How often the plate finder looks. A whole look comes at least every
// second (fewer frames apart where a second of frames would not fit in
// frameBudget); between looks the plates are tracked. A track whose match
// weakens brings a look on, weakEvery frames after the last such look,
// twice as long after each further one while some match stays weak (a
// plate the matching cannot hold, or a false find, would otherwise cost a
// look every few frames); a plate that nears the frame's edge, and a
// scene cut, bring one on at once.
const (
	frameBudget = 256 << 20 // bytes of frames waiting for their plates, at most
	weakEvery   = 3
	holdLooks   = 2 // looks in a row that may miss a tracked plate before it is dropped
	writeAhead  = 4 // frames handed to the encoder's writer, waiting
)

// frame is a decoded YUV 4:2:0 frame, its planes one buffer as ffmpeg's
// rawvideo reads and writes them, and the plates to hide in it.
type frame struct {
	buf   []byte
	img   *image.YCbCr
	quads []imageops.Quad
}

func newFrame(w, h int) *frame {
	cw, ch := (w+1)/2, (h+1)/2
	ys, cs := w*h, cw*ch
	buf := make([]byte, ys+2*cs)
	return &frame{buf: buf, img: &image.YCbCr{
		Y: buf[:ys:ys], Cb: buf[ys : ys+cs : ys+cs], Cr: buf[ys+cs:],
		YStride: w, CStride: cw, SubsampleRatio: image.YCbCrSubsampleRatio420,
		Rect: image.Rect(0, 0, w, h),
	}}
}

// track is a plate followed from frame to frame.
type track struct {
	quad   imageops.Quad  // where it is in the latest frame
	vel    imageops.Point // its last move, a frame's worth
	lost   int            // looks in a row that did not find it
	weak   bool           // its match failed on the latest frame: it went on as it went
	atEdge bool           // near the frame's edge in the latest frame
}

// run reads raw YUV 4:2:0 frames from r, hides their plates in place and
// writes them to w. Frames wait until the next look: a plate first found
// there is followed back through them, so it is hidden before it was seen.
func run(ctx context.Context, r io.Reader, w io.Writer, info Info, opt Options) (int, error) {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	size := len(newFrame(info.Width, info.Height).buf)
	gap := int(math.Round(info.FPS))
	gap = max(2, min(gap, frameBudget/size-writeAhead-2))

	// The writer hides the plates of each frame handed to it, in order,
	// and writes it to the encoder, so that decoding and looking go on
	// while it does.
	toWrite := make(chan *frame, writeAhead)
	free := make(chan *frame, gap+writeAhead+2)
	var hidden, done int
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		for f := range toWrite {
			if ctx.Err() != nil {
				continue
			}
			if len(f.quads) > 0 {
				if err := imageops.HideFrameInPlace(ctx, f.img, f.quads, opt.Style); err != nil {
					cancel(err)
					continue
				}
				hidden += len(f.quads)
			}
			if _, err := w.Write(f.buf); err != nil {
				cancel(fmt.Errorf("encode: %w", err))
				continue
			}
			done++
			if opt.Progress != nil && done%15 == 0 {
				opt.Progress(done, max(done, info.Frames))
			}
			f.quads = f.quads[:0]
			select {
			case free <- f:
			default:
			}
		}
	}()
	err := look(ctx, r, info, gap, toWrite, free)
	if err != nil {
		cancel(err) // the writer hands nothing more to the encoder
	}
	close(toWrite)
	<-finished
	if err == nil {
		err = context.Cause(ctx)
	}
	if err != nil {
		return 0, err
	}
	if opt.Progress != nil {
		opt.Progress(done, done)
	}
	return hidden, nil
}

// look reads the frames, tracks the plates between looks, looks when it
// must, and hands each frame with its plates to the writer.
func look(ctx context.Context, r io.Reader, info Info, gap int, toWrite chan<- *frame, free <-chan *frame) error {
	var (
		pending   []*frame // read since the last look, not yet handed on
		tracks    []*track
		prev      *image.YCbCr // the previous frame's luma (a copy when it was handed on)
		kept      = newFrame(info.Width, info.Height)
		thumbs    [2][]uint8
		lastLook  int
		lastWeak  = -weakEvery
		weakRun   int // looks brought on by weak matches since a frame with none
		bounds    = image.Rect(0, 0, info.Width, info.Height)
		handOnAll = func() error {
			for _, f := range pending {
				select {
				case toWrite <- f:
				case <-ctx.Done():
					return context.Cause(ctx)
				}
			}
			pending = pending[:0]
			return nil
		}
	)
	for n := 0; ; n++ {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		var f *frame
		select {
		case f = <-free:
		default:
			f = newFrame(info.Width, info.Height)
		}
		if _, err := io.ReadFull(r, f.buf); err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				break
			}
			return fmt.Errorf("decode: %w", err)
		}
		thumbs[n%2] = thumb(f.img, thumbs[n%2])
		sceneCut := n > 0 && cut(thumbs[(n+1)%2], thumbs[n%2])
		if sceneCut {
			// The frames before the cut keep their plates; none is
			// carried over it.
			if err := handOnAll(); err != nil {
				return err
			}
			tracks = nil
		}
		weak, edge := false, false
		if prev != nil && !sceneCut {
			live := tracks[:0]
			for _, t := range tracks {
				m := follow(prev, f.img, t.quad, t.vel)
				if m.ok {
					t.quad, t.vel = m.quad, m.shift
				} else {
					t.quad = moved(t.quad, t.vel)
				}
				t.weak = !m.ok
				weak = weak || t.weak
				if !t.quad.Bounds().Overlaps(bounds) {
					continue // gone out of the frame
				}
				near := nearEdge(t.quad, bounds)
				edge = edge || near && !t.atEdge
				t.atEdge = near
				live = append(live, t)
			}
			tracks = live
		}
		if !weak {
			weakRun = 0
		}
		weakDue := weak && n-lastWeak >= min(weakEvery<<min(weakRun, 8), gap)
		if n == 0 || sceneCut || n-lastLook >= gap || edge || weakDue {
			if weakDue {
				lastWeak = n
				weakRun++
			}
			found, err := imageops.FindPlates(ctx, f.img)
			if err != nil {
				return err
			}
			tracks = matchLook(tracks, found, f, pending)
			lastLook = n
		}
		for _, t := range tracks {
			f.quads = append(f.quads, t.quad)
		}
		pending = append(pending, f)
		if lastLook == n {
			copy(kept.img.Y, f.img.Y)
			prev = kept.img
			if err := handOnAll(); err != nil {
				return err
			}
		} else {
			prev = f.img
		}
	}
	return handOnAll()
}

// matchLook takes the plates a look found in f: a track the look found
// again moves to the found quad; a track not found is kept for holdLooks
// looks (its match may still hold: the finder misses plates now and then);
// a plate found smaller than a track whose match failed (part of it
// covered) is hidden in f besides the track; a plate found for the first
// time starts a track and is followed back through pending, the frames
// since the previous look, so it is hidden in them too (where it cannot be
// followed, it goes on as it went, or stays where it was found).
func matchLook(tracks []*track, found []imageops.Quad, f *frame, pending []*frame) []*track {
	matched := make([]bool, len(tracks))
	var next []*track
	for _, q := range found {
		best, bestScore := -1, 0.0
		for i, t := range tracks {
			if matched[i] {
				continue
			}
			if s := overlap(t.quad, q); s > bestScore {
				best, bestScore = i, s
			}
		}
		if best >= 0 {
			matched[best] = true
			t := tracks[best]
			if t.weak && q.Area() < 0.8*t.quad.Area() {
				// Found smaller than it was followed, while its match
				// failed: part of it is covered. Both are hidden here, and
				// it goes on as it went.
				f.quads = append(f.quads, q)
			} else {
				t.quad = q
			}
			t.lost = 0
			next = append(next, t)
			continue
		}
		next = append(next, &track{quad: q, atEdge: nearEdge(q, f.img.Rect)})
		cur, back, from := q, imageops.Point{}, f.img
		for i := len(pending) - 1; i >= 0; i-- {
			if m := follow(from, pending[i].img, cur, back); m.ok {
				cur, back = m.quad, m.shift
			} else {
				cur = moved(cur, back) // on as it went: out of the frame, say
			}
			pending[i].quads = append(pending[i].quads, cur)
			from = pending[i].img
		}
	}
	for i, t := range tracks {
		if !matched[i] && t.lost < holdLooks {
			t.lost++
			next = append(next, t)
		}
	}
	return next
}

// nearEdge reports whether q is within half its height (at least 8
// pixels) of the edge of the frame r.
func nearEdge(q imageops.Quad, r image.Rectangle) bool {
	m := int(math.Max(8, 0.5*q.Height()))
	return !q.Bounds().In(r.Inset(m))
}

package imageops

import (
	"fmt"
	"image"
	"image/color"

	"carphoto"
	"carphoto/imageops/codec"
)

// JPEG output quality follows the input's, within these bounds; inputs that
// were not JPEG get defaultQuality.
const (
	minQuality     = 70
	maxQuality     = 95
	defaultQuality = 90
)

// encode writes the answer in the format the client asked for, else in
// format: a JPEG at the input's quality (flattened on white where the
// image is transparent), a PNG, or a lossy WebP with its alpha.
func encode(img image.Image, in *codec.Photo, asked, format string) (*Output, error) {
	if asked != "" {
		format = asked
	}
	plain, err := encodePlain(img, in, format)
	if err != nil {
		return nil, err
	}
	// The profile is spliced in once the plain answer's size is known: it
	// is kept only in proportion to it (codec.EmbedICC). Left out, the
	// pixels are converted from it to sRGB and encoded again.
	body, dropped, err := codec.EmbedICC(img, format, plain, in.ICC)
	if err != nil {
		return nil, fmt.Errorf("encode: %w", err)
	}
	converted := in.ICCConverted
	if dropped {
		if srgb, ok := codec.ToSRGB(img, in.ICC); ok {
			if body, err = encodePlain(srgb, in, format); err != nil {
				return nil, err
			}
			converted = true
		}
	}
	return &Output{ContentType: "image/" + format, Body: body, ICCDropped: dropped || in.ICCDropped, ICCConverted: converted}, nil
}

// encodePlain encodes img in format, with no colour profile.
func encodePlain(img image.Image, in *codec.Photo, format string) ([]byte, error) {
	var buf answerBuffer
	var err error
	switch format {
	case "jpeg":
		if codec.HasTransparency(img) {
			img = codec.Flatten(img, color.White)
		}
		err = codec.EncodeJPEG(&buf, img, jpegQuality(in), nil)
	case "png":
		err = codec.EncodePNG(&buf, img, nil)
	case "webp":
		err = codec.EncodeWebP(&buf, img, jpegQuality(in))
	default: // Params.Format was checked against Formats when the call was read
		return nil, fmt.Errorf("encode: no encoder for format %q", format)
	}
	if err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// answerBuffer gathers an encoder's output in blocks, each twice the last
// up to maxAnswerBlock, and joins them once into a slice of exactly its
// length. A bytes.Buffer doubles one slice and leaves each smaller one to
// the collector: a 9.6 MB PNG of a 12 MP cut-out passed through 33.6 MB of
// them, allocated inside one task where no collection ran (the cut-out PNG
// row of TestShadowMemory12MP); here about twice the answer.
type answerBuffer struct {
	blocks [][]byte
	n      int
}

const (
	minAnswerBlock = 64 << 10
	maxAnswerBlock = 4 << 20
)

func (b *answerBuffer) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		last := len(b.blocks) - 1
		if last < 0 || len(b.blocks[last]) == cap(b.blocks[last]) {
			size := minAnswerBlock
			if last >= 0 {
				size = min(2*cap(b.blocks[last]), maxAnswerBlock)
			}
			b.blocks = append(b.blocks, make([]byte, 0, size))
			last++
		}
		blk := b.blocks[last]
		k := min(len(p), cap(blk)-len(blk))
		b.blocks[last] = append(blk, p[:k]...)
		p = p[k:]
	}
	b.n += n
	return n, nil
}

// Bytes joins the blocks; the buffer is not written to afterwards.
func (b *answerBuffer) Bytes() []byte {
	if len(b.blocks) == 1 {
		return b.blocks[0]
	}
	out := make([]byte, 0, b.n)
	for _, blk := range b.blocks {
		out = append(out, blk...)
	}
	return out
}

// jpegQuality keeps the output close to the input's quality: re-encoding a
// Q75 photo at Q95 only inflates it, and a Q98 photo at Q80 loses detail.
func jpegQuality(in *codec.Photo) int {
	if in.Quality == 0 {
		return defaultQuality
	}
	return min(max(in.Quality, minQuality), maxQuality)
}

// prefix names the field a client error is about.
func prefix(field string, err error) error {
	if e, ok := err.(*carphoto.Error); ok {
		return &carphoto.Error{Code: e.Code, Message: field + ": " + e.Message, Err: e.Err}
	}
	return err
}

package codec

import (
	"bytes"
	"image"
)

// An answer carries its photo's colour profile only while the profile is
// in proportion: at most MaxKeptICC bytes, and adding no more than the
// answer's own size plus iccAnswerSlack, so that every answer is at most
// twice a plain encode of its pixels plus 64 KB. A larger one is left
// out, and the pixels converted from it to sRGB where it is an RGB
// profile the converter reads (ToSRGB). The answer says which
// (X-Color-Profile: converted or dropped).
const (
	MaxKeptICC     = 1 << 20
	iccAnswerSlack = 64 << 10
)

// EmbedICC returns plain, a JPEG or PNG (format) of img encoded without a
// profile, with icc embedded where it is in proportion; dropped reports a
// profile left out for its size. A profile of another colour space than
// img's (see EncodeJPEG) is left out as the encoders leave it, and not
// reported.
func EmbedICC(img image.Image, format string, plain, icc []byte) (out []byte, dropped bool, err error) {
	_, gray := img.(*image.Gray)
	if len(icc) == 0 || !iccFits(icc, gray) || (format != "jpeg" && format != "png") {
		return plain, false, nil
	}
	if len(icc) > MaxKeptICC {
		return plain, true, nil
	}
	var insert []byte
	prefix := 2 // JPEG: after SOI
	if format == "jpeg" {
		insert = jpegICCSegments(icc)
	} else {
		prefix = len(pngSignature) + 25 // after IHDR
		if insert, err = pngICCChunk(icc); err != nil {
			return nil, false, err
		}
	}
	if len(insert) > len(plain)+iccAnswerSlack || len(plain) < prefix {
		return plain, true, nil
	}
	var b bytes.Buffer
	b.Grow(len(plain) + len(insert))
	b.Write(plain[:prefix])
	b.Write(insert)
	b.Write(plain[prefix:])
	return b.Bytes(), false, nil
}

// ICCInProportion reports whether a JPEG's own profile segments, of
// iccBytes in a file of fileBytes, may be copied to an answer of about the
// file's size (the block path, which keeps the file's segments).
func ICCInProportion(iccBytes, fileBytes int) bool {
	return iccBytes <= MaxKeptICC && iccBytes <= fileBytes-iccBytes+iccAnswerSlack
}

package imageops

import (
	"context"
	"errors"
	"fmt"
	"image"

	"carphoto"
	"carphoto/imageops/codec"
	"carphoto/imageops/jpegblock"
	"carphoto/imageops/paint"
	"carphoto/imageops/plates"
)

// maxBlockEditShare is the largest share of the photo the block path
// decodes and codes again around the plates: a close-up's plates cover
// so much of it that the block path, whose cost grows with that area, is
// slower than decoding and encoding the whole photo. Measured on 12 MP
// photos (CPU, three runs each): at a share of 0.16 (web 0415 enlarged,
// two plates) the block path's hide took 69–311 ms against 424–678 ms to
// decode, hide and encode; at 0.95 (web 0005's close-up) 0.75–1.46 s
// against 1.01–1.14 s. 0.3 keeps the block path well short of the break-even.
const maxBlockEditShare = 0.3

// plateOp is blur-plates and plate-logo: find the plates, then hide them or
// place the design on the sure ones. A baseline JPEG answered as JPEG goes
// the block path (paint.BlockJPEG): the finder reads a preview built from
// the coefficients, only the MCUs a painted plate changes are coded again,
// and the rest of the photo comes back bit for bit (EXIF orientation kept
// as an orientation-only EXIF, ICC kept, other metadata dropped). Any other
// photo, a JPEG the block path does not edit (progressive, arithmetic,
// CMYK), or a damaged one, whose 400 (or lenient decode) is the full
// decoder's, goes the full path: decoded, painted, encoded again.
func plateOp(ctx context.Context, in Input, p Params, blocks bool) (*Output, error) {
	var src *paint.BlockJPEG
	if blocks && (p.Format == "" || p.Format == "jpeg") {
		var err error
		if src, err = paint.OpenBlockJPEG(ctx, in.Photo, in.Limits); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			src = nil
		}
		// A profile out of proportion to the photo is not copied: the
		// full path drops it (codec.EmbedICC).
		if src != nil && !codec.ICCInProportion(src.ICCBytes(), len(in.Photo)) {
			src = nil
		}
	}
	var photo *codec.Photo
	if src == nil {
		var err error
		if photo, err = codec.Decode(ctx, in.Photo, in.Limits); err != nil {
			return nil, err
		}
	}
	var design image.Image
	if p.Op == PlateLogo {
		d, err := codec.Decode(ctx, in.Design, in.Limits)
		if err != nil {
			return nil, prefix("logo", err)
		}
		design = d.Image
	}
	// The photo's vehicles decide only which plates get a design: blur-plates
	// hides every detection and does not look for them.
	var found []plates.Plate
	var err error
	switch {
	case src != nil && p.Op == PlateLogo:
		found, err = plates.DetectIn(ctx, src)
	case src != nil:
		found, err = plates.DetectInAmong(ctx, src, nil)
	case p.Op == PlateLogo:
		found, err = plates.Detect(ctx, photo.Image)
	default:
		found, err = plates.DetectAmong(ctx, photo.Image, nil)
	}
	if err == nil && p.Op == PlateLogo { // a design goes only on a plate that reads as one
		if src != nil {
			err = plates.ReadPlatesIn(ctx, src, found)
		} else {
			err = plates.ReadPlates(ctx, photo.Image, found)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("detect plates: %w", err)
	}
	return paintPlates(ctx, in, p, src, photo, design, found)
}

// paintPlates answers with the plates found hidden, or the design on the
// sure ones: in the JPEG's own blocks when src is open and the plates
// cover little enough of it, else on the decoded photo, which is decoded
// here if only src was.
func paintPlates(ctx context.Context, in Input, p Params, src *paint.BlockJPEG, photo *codec.Photo, design image.Image, found []plates.Plate) (*Output, error) {
	if err := required(p, found); err != nil {
		return nil, err
	}
	// Every style covers the plate's quad grown by the margin rule
	// (plates.HideOf); a design goes on the quad itself.
	quads := quadsOf(found)
	sure, unsure := byConfidence(found)
	if src != nil && src.EditShare(quads) <= maxBlockEditShare {
		var body []byte
		var err error
		if p.Op == PlateLogo {
			body, err = src.PlaceLogo(ctx, sure, unsure, design)
		} else {
			body, err = src.HidePlates(ctx, quads, p.Style)
		}
		switch {
		case err == nil:
			return &Output{ContentType: "image/jpeg", Body: body, PlatesFound: len(found), PlatesDesigned: designed(p, sure)}, nil
		case !errors.Is(err, jpegblock.ErrUnsupported):
			return nil, fmt.Errorf("%s: %w", p.Op, err)
		}
		// The file's Huffman tables cannot code the edit: decode it in full.
	}
	if photo == nil {
		src = nil // the blocks are no longer needed: let them go
		var err error
		if photo, err = codec.Decode(ctx, in.Photo, in.Limits); err != nil {
			return nil, err
		}
	}
	// A transparent PNG or WebP keeps its format (and so its alpha); any
	// other photo is answered as JPEG, as the contract says.
	format := "jpeg"
	if photo.Format != "jpeg" && codec.HasTransparency(photo.Image) {
		format = photo.Format
	}
	// The decoded photo is this operation's own: the plates are painted on
	// it where it is, no copy of the whole frame.
	out := photo.Image
	if len(quads) > 0 {
		var err error
		if p.Op == PlateLogo {
			out, err = paint.PlaceLogoInPlace(ctx, photo.Image, sure, unsure, design)
		} else {
			out, err = paint.HidePlatesInPlace(ctx, photo.Image, quads, p.Style)
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.Op, err)
		}
	}
	res, err := encode(out, photo, p.Format, format)
	if err != nil {
		return nil, err
	}
	res.PlatesFound = len(found)
	res.PlatesDesigned = designed(p, sure)
	return res, nil
}

// designed is how many plates got the design: the sure ones, for
// plate-logo; none for a hiding style.
func designed(p Params, sure []plates.Quad) int {
	if p.Op != PlateLogo {
		return 0
	}
	return len(sure)
}

// required is the answer to requirePlate=true: plate_not_found when no
// plate was found or, for plate-logo, none that gets the design
// (plates.Plate.Designable; any other is blurred instead).
func required(p Params, found []plates.Plate) error {
	if !p.RequirePlate {
		return nil
	}
	if len(found) == 0 {
		return carphoto.Errorf(carphoto.EPlateNotFound,
			"no licence plate was found in the photo; you were not charged (send requirePlate=false to get the photo back unchanged)")
	}
	if sure, _ := byConfidence(found); p.Op == PlateLogo && len(sure) == 0 {
		return carphoto.Errorf(carphoto.EPlateNotFound,
			"no licence plate was found in the photo sure enough to carry the design; you were not charged (send requirePlate=false to get the photo back, anything that may be a plate blurred)")
	}
	return nil
}

// quadsOf is the quads of the plates found.
func quadsOf(found []plates.Plate) []plates.Quad {
	quads := make([]plates.Quad, len(found))
	for i, f := range found {
		quads[i] = f.Quad
	}
	return quads
}

// byConfidence parts the plates found into the quads that get plate-logo's
// design (Plate.Designable: a plate's aspect, and a sure score with nothing
// read on it that says it is lettering or a number, or a reading that is a
// plate's; on Plate.DesignQuad) and those
// blurred as blur-plates blurs them (a design on a grille badge or a sign
// shows, a blur hardly does). A design fitted to a band of a taller quad
// covers every text line found on it (DesignQuad): the rest of the quad,
// grille or bodywork, is left as it is.
func byConfidence(found []plates.Plate) (sure, unsure []plates.Quad) {
	for _, f := range found {
		if f.Designable() {
			sure = append(sure, f.DesignQuad())
		} else {
			unsure = append(unsure, f.Quad)
		}
	}
	return sure, unsure
}

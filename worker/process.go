package worker

import (
	"context"

	"carphoto/imageops"
	"carphoto/imageops/codec"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
	"carphoto/jobs"
)

// process runs a task's operation on its images (imageops.Process) and
// returns the answer as a result to deliver. Errors are *carphoto.Error
// for the client's mistakes.
func process(ctx context.Context, op string, photo, logo []byte, p jobs.Params, lim codec.Limits) (*jobs.Result, error) {
	in := imageops.Input{Photo: photo, Design: logo, Limits: lim}
	if p.Backdrop {
		in.Design, in.Backdrop = nil, logo // the task's second image is the backdrop
	}
	out, err := imageops.Process(ctx, in, params(op, p))
	if err != nil {
		return nil, err
	}
	return &jobs.Result{ContentType: out.ContentType, Body: out.Body, PlatesFound: out.PlatesFound}, nil
}

// params is a task's operation and parameters as imageops takes them.
func params(op string, p jobs.Params) imageops.Params {
	ip := imageops.Params{
		Op:           imageops.Op(op),
		Format:       p.Format,
		Style:        paint.Style(p.Style),
		RequirePlate: p.RequirePlate,
		Reflection:   p.Reflection,
		Canvas:       shadow.Canvas{Crop: p.Crop, Padding: p.Padding, PaddingShare: p.PaddingShare, Aspect: p.Aspect},
		Background:   p.Background,
		Overlay:      paint.OverlayOptions{Position: p.Position, Scale: p.Scale, Opacity: p.Opacity, Margin: p.Margin},
	}
	if p.Backdrop {
		ip.Backdrop = &shadow.Placement{FloorY: p.FloorY, Scale: p.Scale, CenterX: p.CenterX}
	}
	return ip
}

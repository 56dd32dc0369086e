package worker

import (
	"context"

	"carphoto/imageops"
	"carphoto/jobs"
)

// process runs a task's operation on its images (imageops.Process) and
// returns the answer as a result to deliver. Errors are *carphoto.Error
// for the client's mistakes.
func process(ctx context.Context, in imageops.Input, p imageops.Params) (*jobs.Result, error) {
	out, err := imageops.Process(ctx, in, p)
	if err != nil {
		return nil, err
	}
	return &jobs.Result{ContentType: out.ContentType, Body: out.Body, PlatesFound: out.PlatesFound, PlatesDesigned: out.PlatesDesigned,
		CarTruncated: out.CarTruncated, CarOccluded: out.CarOccluded, CarScale: out.CarScale, ICCDropped: out.ICCDropped, ICCConverted: out.ICCConverted}, nil
}

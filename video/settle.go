package video

import (
	"context"
	"errors"
	"fmt"

	"carphoto"
)

// Ledger settles a job's hold: billing.Service.
type Ledger interface {
	CaptureID(ctx context.Context, accountID, holdID string) (remaining int64, err error)
	ReleaseID(ctx context.Context, accountID, holdID string) error
}

// Outcome is how a job ended: Done, or Failed with a client-facing code
// and message.
type Outcome struct {
	Status      string
	Code, Error string
}

// Failure is the outcome of a job that failed on our side: the client is
// told it was not charged.
var Failure = Outcome{Status: Failed, Code: carphoto.EProcessingFailed,
	Error: "the job failed on our side; you were not charged, please send the video again"}

// End is the one place a video job's money is settled: it records the
// job's outcome once and settles its hold to match, captured when done
// and released when failed. A done job is charged first, so that a job
// shown done has been paid for; a capture that fails ends it failed
// instead. A failed job's hold is released whoever recorded the failure
// (releasing does nothing to a hold already captured or released), also
// when the job's record is missing, as it is when it could not be
// created.
//
// It returns the outcome recorded by this call and whether this call
// ended the job (false when another run ended it first, or on error);
// the error says what could not be recorded or settled: a hold left
// unsettled expires on its own (billing's hold TTL), uncharged.
func (js Jobs) End(ctx context.Context, l Ledger, job *Job, end Outcome) (Outcome, bool, error) {
	var errs []error
	if end.Status == Done {
		if _, err := l.CaptureID(ctx, job.Account, job.Hold); err != nil {
			errs = append(errs, fmt.Errorf("capture hold: %w", err))
			end = Outcome{Status: Failed, Code: carphoto.EProcessingFailed,
				Error: "could not record the charge; you were not charged, please send the video again"}
		}
	}
	fields := map[string]any{"status": end.Status}
	if end.Status == Failed {
		fields["code"], fields["error"] = end.Code, end.Error
	}
	ended, err := js.Update(ctx, job.ID, fields)
	if err != nil {
		errs = append(errs, fmt.Errorf("record the job's end: %w", err))
	}
	if end.Status == Failed {
		if err := l.ReleaseID(ctx, job.Account, job.Hold); err != nil {
			errs = append(errs, fmt.Errorf("release hold: %w", err))
		}
	}
	return end, ended && err == nil, errors.Join(errs...)
}

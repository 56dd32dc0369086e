package video_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"carphoto/internal/testenv/redistest"
	"carphoto/video"
)

// ledger is billing's holds as End sees them: a hold is captured at most
// once, a released hold cannot be captured, and releasing a captured one
// does nothing.
type ledger struct {
	state      map[string]string // hold → "captured" or "released"
	captureErr error
}

func (l *ledger) CaptureID(ctx context.Context, account, hold string) (int64, error) {
	if l.captureErr != nil {
		return 0, l.captureErr
	}
	if l.state[hold] == "released" {
		return 0, errors.New("hold closed")
	}
	l.state[hold] = "captured"
	return 0, nil
}

func (l *ledger) ReleaseID(ctx context.Context, account, hold string) error {
	if l.state[hold] == "" {
		l.state[hold] = "released"
	}
	return nil
}

// A job's end is recorded once and its hold settled to match: captured
// when done, released when failed (also when the job could not be
// recorded), never charged when the charge could not be recorded.
func TestJobsEnd(t *testing.T) {
	ctx := context.Background()
	js := video.Jobs{RDB: redistest.New(t, 9).Client, TTL: time.Minute}
	tests := []struct {
		name       string
		create     bool
		captureErr error
		end        video.Outcome
		want       video.Outcome
		wantEnded  bool
		wantHold   string
	}{
		{"done", true, nil, video.Outcome{Status: video.Done}, video.Outcome{Status: video.Done}, true, "captured"},
		{"failed", true, nil, video.Failure, video.Failure, true, "released"},
		{"charge not recorded", true, errors.New("redis down"), video.Outcome{Status: video.Done},
			video.Outcome{Status: video.Failed, Code: "processing_failed"}, true, "released"},
		{"never recorded", false, nil, video.Failure, video.Failure, false, "released"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := &video.Job{ID: "vid_" + tc.name, Account: "acct", Status: video.Processing, Hold: "hold_" + tc.name}
			if tc.create {
				if err := js.Create(ctx, job); err != nil {
					t.Fatal(err)
				}
			}
			l := &ledger{state: map[string]string{}, captureErr: tc.captureErr}
			got, ended, err := js.End(ctx, l, job, tc.end)
			if got.Status != tc.want.Status || got.Code != tc.want.Code || ended != tc.wantEnded {
				t.Errorf("End = %+v, ended %v; want %+v, ended %v", got, ended, tc.want, tc.wantEnded)
			}
			if (err != nil) != (tc.captureErr != nil) {
				t.Errorf("error %v, want one only when the charge failed", err)
			}
			if l.state[job.Hold] != tc.wantHold {
				t.Errorf("hold %q, want %s", l.state[job.Hold], tc.wantHold)
			}
			if !tc.create {
				return
			}
			rec, err := js.Get(ctx, job.ID)
			if err != nil || rec.Status != got.Status || rec.Code != got.Code {
				t.Errorf("record %+v (%v), want %+v", rec, err, got)
			}
			// A later end (another run's) changes neither the job nor its hold.
			l.captureErr = nil
			for _, again := range []video.Outcome{{Status: video.Done}, video.Failure} {
				if _, ended, _ := js.End(ctx, l, job, again); ended || l.state[job.Hold] != tc.wantHold {
					t.Errorf("a second end %s: ended %v, hold %q; want not ended, hold %s", again.Status, ended, l.state[job.Hold], tc.wantHold)
				}
			}
			if rec2, _ := js.Get(ctx, job.ID); rec2.Status != rec.Status {
				t.Errorf("a second end changed the job from %s to %s", rec.Status, rec2.Status)
			}
		})
	}
}

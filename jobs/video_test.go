package jobs_test

import (
	"encoding/json"
	"testing"

	"carphoto/jobs"
)

// A video run's task goes to the video worker and names its job and run.
func TestNewVideoTask(t *testing.T) {
	for _, tc := range []struct{ attempt int }{{1}, {2}} {
		task, err := jobs.NewVideoTask("job1", tc.attempt)
		if err != nil {
			t.Fatal(err)
		}
		if task.Type() != jobs.VideoTaskType {
			t.Errorf("run %d: task type %q, want %q", tc.attempt, task.Type(), jobs.VideoTaskType)
		}
		var p jobs.VideoPayload
		if err := json.Unmarshal(task.Payload(), &p); err != nil || p != (jobs.VideoPayload{JobID: "job1", Attempt: tc.attempt}) {
			t.Errorf("run %d: payload %+v (%v), want job1 run %d", tc.attempt, p, err, tc.attempt)
		}
	}
}

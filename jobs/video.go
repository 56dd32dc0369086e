package jobs

import (
	"encoding/json"
	"fmt"

	"github.com/hibiken/asynq"
)

// The Asynq queue and task type of video jobs: a queue of their own, which
// a worker serves with its own concurrency, so that photos never wait
// behind a video.
const (
	VideoQueue    = "videos"
	VideoTaskType = "video:blur"
)

// VideoPayload is what a video task carries: the job's id and the run it
// was queued as; the rest is in the job's record (package video). The
// runs after the first are Asynq's retries of the same task, numbered by
// its retry count (asynq.GetRetryCount), not by Attempt.
type VideoPayload struct {
	JobID   string `json:"job"`
	Attempt int    `json:"attempt"`
}

// NewVideoTask is run attempt (from 1) of video job id on the video queue.
// The first run's task id is the job's, a later run's "id.attempt", so
// that each run is queued once however often it is asked for. opts add
// the task's retries (asynq.MaxRetry: the runs after the first, the one
// retry policy of a job), timeout and retention. The web queues run 1.
func NewVideoTask(id string, attempt int, opts ...asynq.Option) (*asynq.Task, error) {
	payload, err := json.Marshal(VideoPayload{JobID: id, Attempt: attempt})
	if err != nil {
		return nil, err
	}
	tid := id
	if attempt > 1 {
		tid = fmt.Sprintf("%s.%d", id, attempt)
	}
	return asynq.NewTask(VideoTaskType, payload, append([]asynq.Option{asynq.Queue(VideoQueue), asynq.TaskID(tid)}, opts...)...), nil
}

package video

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
)

// States of a job.
const (
	Queued     = "queued"
	Processing = "processing"
	Done       = "done"
	Failed     = "failed"
)

// Job is a video job's record in Redis.
type Job struct {
	ID          string
	Account     string
	Status      string
	Style       string
	FramesDone  int
	FramesTotal int
	Duration    float64 // seconds
	Credits     int64   // held on submit, charged on success
	Hold        string  // the billing hold's id
	Webhook     string
	Attempt     int       // the run at the job, from 1: the queue's retry count + 1
	Started     time.Time // when its current run started processing; zero while queued
	Worker      string    // the worker process at the job, once one took it
	Code, Error string    // when failed
	Created     time.Time
	Updated     time.Time
}

// InputKey and ResultKey name a job's files in the videos' store (objstore.Videos).
func InputKey(id string) string  { return id + ".in" }
func ResultKey(id string) string { return id + ".mp4" }

func jobKey(id string) string { return "cp:video:" + id }

// Jobs keeps job records in Redis; each expires ttl after its last change.
type Jobs struct {
	RDB redis.UniversalClient
	TTL time.Duration
}

// Create stores a new job.
func (js Jobs) Create(ctx context.Context, j *Job) error {
	now := time.Now()
	j.Created, j.Updated = now, now
	pipe := js.RDB.TxPipeline()
	pipe.HSet(ctx, jobKey(j.ID), map[string]any{
		"account": j.Account, "status": j.Status, "style": j.Style, "frames_done": j.FramesDone,
		"frames_total": j.FramesTotal, "duration": j.Duration, "credits": j.Credits, "hold": j.Hold,
		"webhook": j.Webhook, "attempt": max(j.Attempt, 1), "created": now.UnixMilli(), "updated": now.UnixMilli(),
	})
	pipe.Expire(ctx, jobKey(j.ID), js.TTL)
	_, err := redisha.Exec(ctx, pipe)
	return err
}

// Get reads a job; nil when there is none (never created, or expired).
func (js Jobs) Get(ctx context.Context, id string) (*Job, error) {
	m, err := js.RDB.HGetAll(ctx, jobKey(id)).Result()
	if err != nil {
		return nil, err
	}
	if len(m) == 0 {
		return nil, nil
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	ms := func(s string) time.Time { n, _ := strconv.ParseInt(s, 10, 64); return time.UnixMilli(n) }
	j := &Job{ID: id, Account: m["account"], Status: m["status"], Style: m["style"],
		FramesDone: atoi(m["frames_done"]), FramesTotal: atoi(m["frames_total"]), Hold: m["hold"],
		Webhook: m["webhook"], Attempt: atoi(m["attempt"]), Worker: m["worker"], Code: m["code"], Error: m["error"], Created: ms(m["created"]), Updated: ms(m["updated"])}
	if m["started"] != "" {
		j.Started = ms(m["started"])
	}
	j.Duration, _ = strconv.ParseFloat(m["duration"], 64)
	j.Credits, _ = strconv.ParseInt(m["credits"], 10, 64)
	return j, nil
}

// Update sets fields of a job (and its time of change), unless the job is
// over (done or failed) and the change is not: a late or repeated run of a
// job never overwrites its outcome. It reports whether it changed the job.
func (js Jobs) Update(ctx context.Context, id string, fields map[string]any) (bool, error) {
	args := []any{time.Now().UnixMilli(), int64(js.TTL / time.Millisecond)}
	for k, v := range fields {
		args = append(args, k, v)
	}
	n, err := updateScript.Run(ctx, js.RDB, []string{jobKey(id)}, args...).Int()
	return n == 1, err
}

// updateScript: KEYS[1] the job; ARGV now (ms), ttl (ms), then field,
// value pairs. A job that is over only takes a change of nothing but
// frames; a missing job is not created.
var updateScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local st = redis.call('HGET', KEYS[1], 'status')
if st == 'done' or st == 'failed' then return 0 end
for i = 3, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i+1]) end
redis.call('HSET', KEYS[1], 'updated', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
`)

// Progress records frames done of total.
func (js Jobs) Progress(ctx context.Context, id string, done, total int) error {
	_, err := js.Update(ctx, id, map[string]any{"frames_done": done, "frames_total": total})
	if err != nil {
		return fmt.Errorf("video progress: %w", err)
	}
	return nil
}

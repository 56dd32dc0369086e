package server

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hibiken/asynq"
	"github.com/labstack/echo/v4"

	"carphoto"
	"carphoto/billing"
	"carphoto/imageops"
	"carphoto/internal/netguard"
	"carphoto/jobs"
	"carphoto/objstore"
	"carphoto/video"
)

// VideoConfig is the web side's share of video jobs' settings; a nil
// Store leaves video-blur off.
type VideoConfig struct {
	Store      objstore.Store
	Notifier   video.Notifier
	MaxBytes   int64   // cap on an uploaded video
	MaxSeconds float64 // cap on its duration
	// MaxFramePixels and MaxPixels cap a frame's width × height and the
	// width × height × frames of the whole video, from the probe.
	MaxFramePixels int
	MaxPixels      int64
	UploadTimeout  time.Duration // the whole upload must arrive within this
	JobTimeout     time.Duration // one run of the job
	Retries        int           // runs after the first, when a run fails or its worker dies (asynq.MaxRetry)
	ResultTTL      time.Duration // how long the job and its result are kept
}

func (vc VideoConfig) limits() video.Limits {
	return video.Limits{MaxSeconds: vc.MaxSeconds, MaxFramePixels: vc.MaxFramePixels, MaxPixels: vc.MaxPixels}
}

// OpVideoBlur is the video operation's name in the URL and the ledger.
const OpVideoBlur = string(imageops.VideoBlur)

func (s *Server) videoJobs() video.Jobs {
	return video.Jobs{RDB: s.rdb, TTL: s.cfg.Video.ResultTTL}
}

// videoBlur takes a video, checks it, holds its credits and queues the job:
// 202 with the job's id and where to ask after it.
func (s *Server) videoBlur(c echo.Context) error {
	c.Set(ctxOp, OpVideoBlur)
	vc := s.cfg.Video
	if vc.Store == nil {
		return carphoto.Errorf(carphoto.EUnavailable, "video-blur is not enabled on this server")
	}
	ctx := c.Request().Context()
	// Its turn among the key's calls comes within REQUEST_TIMEOUT, like a
	// photo's; the upload's own timeout starts then.
	wctx, wcancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	leave, err := s.enter(wctx, c)
	wcancel()
	if err != nil {
		return err
	}
	defer leave()
	if err := video.Available(); err != nil {
		return carphoto.Wrap(err, carphoto.EUnavailable, "video-blur needs ffmpeg on the server, which is missing; retry later")
	}

	id := "vid_" + strings.ToLower(requestIDOf(c))
	// A video takes longer to arrive than the server's per-request
	// timeouts allow a photo: this request gets its own, for reading and
	// for writing the answer after it.
	http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(vc.UploadTimeout + time.Minute))
	keep := false // the upload is deleted again unless the job is queued
	defer func() {
		if !keep {
			vc.Store.Delete(context.WithoutCancel(ctx), video.InputKey(id))
		}
	}()
	var style, webhook string
	var digest []byte
	err = uploading(c, vc.UploadTimeout, time.Time{}, func() (err error) {
		style, webhook, digest, err = s.readVideo(c, id)
		return err
	})
	if err != nil {
		return err
	}
	// A retry with the Idempotency-Key of a queued job gets that job again,
	// uncharged; its own upload is deleted.
	idem, replayed, err := s.beginOnce(c, accountID(c), []byte(OpVideoBlur), []byte(style), []byte(webhook), digest)
	if replayed || err != nil {
		return err
	}
	defer idem.end(context.WithoutCancel(ctx), c)
	info, err := s.probeVideo(ctx, id)
	if err != nil {
		return err
	}
	credits, err := s.queueVideo(ctx, c, id, style, webhook, info)
	if err != nil {
		return err
	}
	keep = true
	c.Response().Header().Set("Location", "/v1/jobs/"+id)
	body, err := json.Marshal(map[string]any{
		"id": id, "status": video.Queued, "credits": credits, "durationSeconds": info.Duration,
		"frames": info.Frames, "statusUrl": "/v1/jobs/" + id,
	})
	if err != nil {
		return carphoto.Wrap(err, carphoto.EInternal, "internal error")
	}
	body = append(body, '\n')
	idem.finish(context.WithoutCancel(ctx), c, http.StatusAccepted, echo.MIMEApplicationJSON, body, false)
	return c.JSONBlob(http.StatusAccepted, body)
}

// probeVideo is what the uploaded video id is (ffprobe), held to the
// video limits before any work.
func (s *Server) probeVideo(ctx context.Context, id string) (video.Info, error) {
	path, done, err := s.cfg.Video.Store.Path(ctx, video.InputKey(id))
	if err != nil {
		return video.Info{}, carphoto.Wrap(err, carphoto.EProcessingFailed, "could not read the stored video; you were not charged, please retry")
	}
	info, err := video.Probe(ctx, path)
	done()
	if err != nil {
		return video.Info{}, err
	}
	return info, s.cfg.Video.limits().Check(info)
}

// queueVideo holds the job's credits, records the job and queues it; on
// any failure the hold is settled (released) before it returns.
func (s *Server) queueVideo(ctx context.Context, c echo.Context, id, style, webhook string, info video.Info) (credits int64, err error) {
	vc := s.cfg.Video
	// Asynq owns the job's runs: a run that fails, or whose worker process
	// dies during it, is run again while MaxRetry allows (worker/video.go).
	task, err := jobs.NewVideoTask(id, 1, asynq.MaxRetry(vc.Retries), asynq.Timeout(vc.JobTimeout), asynq.Retention(vc.ResultTTL))
	if err != nil {
		return 0, carphoto.Wrap(err, carphoto.EInternal, "internal error")
	}
	credits = s.billing.VideoPrice(info.Duration)
	runs := time.Duration(vc.Retries + 1)
	hold, err := s.billing.HoldFor(ctx, accountID(c), id, billing.Call{Op: OpVideoBlur}, credits, runs*vc.JobTimeout+10*time.Minute)
	if err != nil {
		s.release(ctx, logFor(c), hold) // a hold made though its answer was lost
		return 0, err
	}
	js := s.videoJobs()
	job := &video.Job{ID: id, Account: accountID(c), Status: video.Queued, Style: style, FramesTotal: info.Frames,
		Duration: info.Duration, Credits: credits, Hold: hold.ID(), Webhook: webhook}
	// The hold is settled where every job's is, video.Jobs.End: here
	// released when the job cannot be recorded or queued.
	unqueued := func(err error, msg string) error {
		ctx := context.WithoutCancel(ctx)
		if _, _, err := js.End(ctx, s.billing, job, video.Outcome{Status: video.Failed, Code: carphoto.EUnavailable, Error: msg}); err != nil {
			logFor(c).Error().Err(err).Str("job", id).Msg("end the unqueued video job")
		}
		return carphoto.Wrap(err, carphoto.EUnavailable, msg+"; you were not charged, please retry")
	}
	if err := js.Create(ctx, job); err != nil {
		return 0, unqueued(err, "could not record the job")
	}
	qctx, qcancel := context.WithTimeout(ctx, s.cfg.RequestTimeout)
	defer qcancel()
	if err := jobs.Enqueue(qctx, s.rdb, s.videoQueue, task); err != nil {
		return 0, unqueued(err, "could not queue the job")
	}
	return credits, nil
}

// videoFields are video-blur's multipart fields.
var videoFields = []string{"video", "style", "webhookUrl"}

// readVideo streams the upload's video part into the store (never into
// memory), hashing it for the Idempotency-Key's fingerprint (readForm).
func (s *Server) readVideo(c echo.Context, id string) (style, webhook string, digest []byte, err error) {
	vc := s.cfg.Video
	r := c.Request()
	h := sha256.New()
	f := form{endpoint: "video-blur", fields: videoFields, files: map[string]int64{"video": vc.MaxBytes},
		slack: 1 << 20, timeout: vc.UploadTimeout,
		stream: func(_ string, in io.Reader) (int64, error) {
			n, err := vc.Store.Put(r.Context(), video.InputKey(id), io.TeeReader(in, h))
			if err != nil {
				return n, carphoto.Wrap(err, carphoto.EUnavailable, "could not store the video; you were not charged, retry shortly")
			}
			return n, nil
		}}
	p, err := readForm(c.Response().Writer, r, f)
	switch {
	case err != nil:
		return "", "", nil, err
	case !p.has("video"):
		return "", "", nil, carphoto.Errorf(carphoto.EMissingImage, "video missing: send the clip as a multipart/form-data file field named \"video\"")
	case p.invalid != nil:
		return "", "", nil, p.invalid
	case p.sizes["video"] == 0:
		return "", "", nil, carphoto.Errorf(carphoto.EInvalidParams, "video is empty")
	}
	st, err := imageops.ParseStyle(p.values["style"])
	if err != nil {
		return "", "", nil, err
	}
	if w := p.values["webhookUrl"]; w != "" {
		if len(vc.Notifier.Secret) == 0 {
			return "", "", nil, carphoto.Errorf(carphoto.EInvalidParams, "webhookUrl: webhooks are not configured on this server (WEBHOOK_SECRET); poll the job's status instead")
		}
		if err := vc.Notifier.Check(r.Context(), w); err != nil {
			msg := err.Error()
			if errors.Is(err, netguard.ErrBlocked) && s.cfg.ZeroSetup {
				msg += " (to send webhooks to your own machine while trying the service locally, restart it with ALLOW_PRIVATE_URLS=true)"
			}
			return "", "", nil, carphoto.Wrap(err, carphoto.EInvalidParams, msg)
		}
		webhook = w
	}
	return string(st), webhook, h.Sum(nil), nil
}

// jobView is a job as GET /v1/jobs/{id} shows it.
type jobView struct {
	ID       string  `json:"id"`
	Status   string  `json:"status"`
	Progress any     `json:"progress"`
	Duration float64 `json:"durationSeconds"`
	Credits  int64   `json:"credits"`
	Result   string  `json:"resultUrl,omitempty"`
	Code     string  `json:"code,omitempty"`
	Error    string  `json:"error,omitempty"`
	Created  string  `json:"createdAt"`
	Updated  string  `json:"updatedAt"`
}

func (s *Server) videoJob(c echo.Context) error {
	job, err := s.ownJob(c)
	if err != nil {
		return err
	}
	v := jobView{ID: job.ID, Status: job.Status, Duration: job.Duration, Credits: job.Credits, Code: job.Code, Error: job.Error,
		Progress: map[string]int{"framesDone": job.FramesDone, "framesTotal": job.FramesTotal},
		Created:  job.Created.UTC().Format(time.RFC3339), Updated: job.Updated.UTC().Format(time.RFC3339)}
	switch job.Status {
	case video.Done:
		v.Result = "/v1/jobs/" + job.ID + "/result"
	case video.Queued, video.Processing:
		c.Response().Header().Set("Retry-After", strconv.Itoa(jobRetryAfter(job, time.Now())))
	}
	return c.JSON(http.StatusOK, v)
}

func (s *Server) videoResult(c echo.Context) error {
	job, err := s.ownJob(c)
	if err != nil {
		return err
	}
	if job.Status != video.Done {
		return carphoto.Errorf(carphoto.ENotFound, "job %s has no result: it is %s", job.ID, job.Status)
	}
	f, err := s.cfg.Video.Store.Open(c.Request().Context(), video.ResultKey(job.ID))
	if errors.Is(err, fs.ErrNotExist) {
		return carphoto.Errorf(carphoto.ENotFound, "the result of job %s has expired", job.ID)
	}
	if err != nil {
		// The store (a bucket over the network) did not answer: the result
		// may well be there.
		return carphoto.Wrap(err, carphoto.EUnavailable, "the result could not be read from storage; retry shortly")
	}
	defer f.Close()
	// Hundreds of megabytes take longer to send than a photo's answer.
	http.NewResponseController(c.Response()).SetWriteDeadline(time.Now().Add(s.cfg.Video.UploadTimeout))
	c.Response().Header().Set(echo.HeaderContentType, "video/mp4")
	c.Response().Header().Set("Content-Disposition", `attachment; filename="`+job.ID+`.mp4"`)
	w := &contentRefusal{ResponseWriter: c.Response(), size: f.Size(), ranges: c.Request().Header.Get("Range")}
	http.ServeContent(w, c.Request(), job.ID+".mp4", f.ModTime(), f)
	return w.err()
}

// ownJob is the caller's job named in the path; another account's job is
// as unknown as a job that never was.
func (s *Server) ownJob(c echo.Context) (*video.Job, error) {
	if s.cfg.Video.Store == nil {
		return nil, carphoto.Errorf(carphoto.ENotFound, "video jobs are not enabled on this server")
	}
	id := c.Param("id")
	job, err := s.videoJobs().Get(c.Request().Context(), id)
	if err != nil {
		return nil, carphoto.Wrap(err, carphoto.EUnavailable, "the service's store is unavailable; retry shortly")
	}
	if job == nil || job.Account != accountID(c) {
		return nil, carphoto.Errorf(carphoto.ENotFound, "no job %s", strconv.Quote(id))
	}
	return job, nil
}

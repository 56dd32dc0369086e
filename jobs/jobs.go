// Package jobs is the contract between the web process and the workers: the
// task types, their payload, and the request path through Redis.
//
// The photo travels in its own key (SET EX), the Asynq task carries only ids
// and parameters, and the worker answers by RPUSH on a per-request key that
// the web side BLPOPs until the request's deadline (docs/research/measurements.md, "Service:
// the whole path", has the measurements behind this shape). A late answer expires unread.
//
// Every function here that a request or a worker calls rides through a
// Redis that restarts or fails over (redisha.Retry) until its context
// ends, so its callers never retry.
package jobs

import (
	"carphoto/imageops"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// TaskType is the Asynq task type of an operation: "photo:<op>".
func TaskType(op imageops.Op) string { return "photo:" + string(op) }

// TaskTypes are the task types a worker of this release handles.
func TaskTypes() []string {
	var types []string
	for _, op := range imageops.Ops {
		types = append(types, TaskType(op))
		if op == imageops.CarShadow || op == imageops.CarCutout {
			types = append(types, TaskType(op)+studioSuffix)
		}
	}
	return types
}

// studioSuffix marks the task type of a studio call with plates hidden or
// a whole car required, which workers of earlier releases
// would run without: a rolling deploy's old worker handles no such type,
// so the task fails there and the call ends processing_failed, uncharged,
// instead of coming back charged with its plates shown or its car cut.
const studioSuffix = "+studio"

// taskTypeOf is the task type of a call with params p.
func taskTypeOf(p imageops.Params) string {
	if p.Plates != imageops.PlatesKeep || p.RequireWholeCar {
		return TaskType(p.Op) + studioSuffix
	}
	return TaskType(p.Op)
}

// Queue is the Asynq queue every photo task goes to.
const Queue = "photos"

// keyPrefix namespaces every key of the request path.
const keyPrefix = "cp:req:"

// Payload is what an Asynq task carries: ids and parameters, never pixels.
type Payload struct {
	RequestID string      `json:"rid"`
	Op        imageops.Op `json:"op"`
	AccountID string      `json:"acct,omitempty"`
	// Design and Backdrop say the call's design and backdrop wait in
	// Redis under DesignKey and BackdropKey: one of them, or both for
	// car-shadow and car-cutout with plates=logo on a backdrop.
	Design   bool `json:"design,omitempty"`
	Backdrop bool `json:"backdrop,omitempty"`
	// HasLogo is how a task queued by the release before said it had a
	// second image (LogoKey): a design, or a backdrop where its params
	// place the car on one. Read, never written.
	HasLogo bool `json:"logo,omitempty"`
	// Asset is the second image's key in the asset store when it is a
	// saved asset (a design or backdrop by Params.Backdrop), in place of
	// a copy in Redis.
	Asset string `json:"asset,omitempty"`
	// DesignAsset is the design's key in the asset store for a call that
	// also has a backdrop (plates=logo on a backdrop), where Asset, if
	// set, is the backdrop's.
	DesignAsset string `json:"designAsset,omitempty"`
	// Params travel as "params" in the wire format (params.go), Op
	// outside them.
	Params     imageops.Params `json:"-"`
	EnqueuedAt time.Time       `json:"enq"`
	Deadline   time.Time       `json:"deadline"`
	// StartBy is Request.StartBy: a worker taking the task up later
	// answers it withdrawn (Withdrawn) instead of running it.
	StartBy time.Time `json:"startBy,omitzero"`
	// Run counts the task's runs: 2 when the worker process at the first
	// died during it. The worker logs such a task's parameters first.
	Run int `json:"run,omitempty"`
}

// PhotoKey, DesignKey, BackdropKey and ResultKey are the Redis keys of one
// request. A request's keys share the hash tag {request_id}: on a Redis
// Cluster they live on one master (deleted together), while requests
// spread over all. LogoKey is where the release before kept either second
// image; a worker reads it for the tasks that release queued.
func PhotoKey(requestID string) string    { return keyPrefix + "{" + requestID + "}:photo" }
func DesignKey(requestID string) string   { return keyPrefix + "{" + requestID + "}:design" }
func BackdropKey(requestID string) string { return keyPrefix + "{" + requestID + "}:backdrop" }
func LogoKey(requestID string) string     { return keyPrefix + "{" + requestID + "}:logo" }
func ResultKey(requestID string) string   { return keyPrefix + "{" + requestID + "}:result" }

// AliveKey is refreshed by the worker processing a request's task, every
// heartbeat with a lifetime of aliveTTL; it holds the worker's id, so that
// the web side, seeing it lapse with no answer, asks after that worker
// process (WorkerKey) before it takes the task to have killed it.
func AliveKey(requestID string) string { return keyPrefix + "{" + requestID + "}:alive" }

// WorkerKey is a worker process's own sign of life, refreshed every
// heartbeat with a lifetime of aliveTTL while the process runs; it holds
// WorkerStopped for a while after a clean stop.
func WorkerKey(workerID string) string { return "cp:worker:" + workerID }

// WorkerStopped is WorkerKey's value once its process stopped cleanly,
// its unfinished tasks handed back to the queue.
const WorkerStopped = "stopped"

// Result is a worker's answer. Either Body holds the processed image (Code
// empty) or Code and Message say why not.
type Result struct {
	ContentType string `json:"ct,omitempty"`
	Code        string `json:"code,omitempty"`
	Message     string `json:"msg,omitempty"`
	PlatesFound int    `json:"plates"`
	// PlatesDesigned is imageops.Output's: how many got the design.
	PlatesDesigned int `json:"designed,omitempty"`
	// CarTruncated, CarOccluded and CarScale are imageops.Output's.
	CarTruncated []string `json:"truncated,omitempty"`
	CarOccluded  bool     `json:"occluded,omitempty"`
	CarScale     float64  `json:"carScale,omitempty"`
	// ICCDropped and ICCConverted are imageops.Output's: the colour
	// profile left out, and the pixels converted from it to sRGB.
	ICCDropped   bool `json:"iccDropped,omitempty"`
	ICCConverted bool `json:"iccConverted,omitempty"`
	// Overran marks Overran's result: started in time, cut short by the
	// deadline (Code EUnavailable, as Withdrawn's).
	Overran    bool          `json:"overran,omitempty"`
	QueueWait  time.Duration `json:"wait"`
	Processing time.Duration `json:"proc"`
	Worker     string        `json:"worker,omitempty"`
	Body       []byte        `json:"-"`
}

// OK reports whether the result carries an image.
func (r *Result) OK() bool { return r.Code == "" }

// encode frames the result as a 4-byte header length, the JSON header and
// the image bytes, so the image is never base64-inflated.
func (r *Result) encode() ([]byte, error) {
	hdr, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	buf := make([]byte, 4, 4+len(hdr)+len(r.Body))
	binary.BigEndian.PutUint32(buf, uint32(len(hdr)))
	buf = append(buf, hdr...)
	return append(buf, r.Body...), nil
}

// DecodeResult reads a frame written by Deliver.
func DecodeResult(b []byte) (*Result, error) {
	if len(b) < 4 {
		return nil, errors.New("result frame too short")
	}
	n := binary.BigEndian.Uint32(b)
	if uint64(n) > uint64(len(b)-4) {
		return nil, fmt.Errorf("result header length %d exceeds frame of %d bytes", n, len(b))
	}
	var r Result
	if err := json.Unmarshal(b[4:4+n], &r); err != nil {
		return nil, fmt.Errorf("result header: %w", err)
	}
	r.Body = b[4+n:]
	return &r, nil
}

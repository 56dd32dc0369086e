package jobs_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"carphoto/imageops"
	"carphoto/imageops/paint"
	"carphoto/imageops/shadow"
	"carphoto/internal/redisha"
	"carphoto/internal/testenv/redistest"
	"carphoto/jobs"
)

// A result delivered by a worker reaches the waiting request intact.
func TestDoReturnsDeliveredResult(t *testing.T) {
	rs := redistest.New(t, 7)
	c := jobs.NewClient(rs.Client, 0)
	defer c.Close()
	ctx := context.Background()
	photo := bytes.Repeat([]byte{1, 2, 3}, 1000)
	req := jobs.Request{ID: "r1", Photo: photo, Params: imageops.Params{Op: imageops.BlurPlates, Style: imageops.StylePixelate}, Deadline: time.Now().Add(5 * time.Second)}

	// A stand-in worker: wait for the photo, answer on the result key.
	go func() {
		for {
			got, err := rs.Client.Get(ctx, jobs.PhotoKey("r1")).Bytes()
			if err == nil && bytes.Equal(got, photo) {
				p := jobs.Payload{RequestID: "r1", Deadline: req.Deadline}
				jobs.Deliver(ctx, rs.Client, p, &jobs.Result{ContentType: "image/jpeg", PlatesFound: 2, Body: []byte("JPEGDATA")})
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	res, err := c.Do(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if !res.OK() || res.ContentType != "image/jpeg" || res.PlatesFound != 2 || string(res.Body) != "JPEGDATA" {
		t.Errorf("got %+v body %q", res, res.Body)
	}
	if n, _ := rs.Client.Exists(ctx, jobs.PhotoKey("r1")).Result(); n != 0 {
		t.Errorf("photo key left in Redis after the request ended")
	}
}

// With no worker, Do gives up at the deadline, not after it, and cleans up
// its inputs.
func TestDoTimesOutAtDeadline(t *testing.T) {
	rs := redistest.New(t, 7)
	c := jobs.NewClient(rs.Client, 0)
	defer c.Close()
	ctx := context.Background()
	req := jobs.Request{ID: "r2", Photo: []byte("x"), Backdrop: []byte("y"), Params: imageops.Params{Op: imageops.CarShadow, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}, Deadline: time.Now().Add(300 * time.Millisecond)}
	_, err := c.Do(ctx, req)
	if !errors.Is(err, jobs.ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	// Not a whole second late: a wait shorter than a second is not
	// rounded up to one.
	if late := time.Since(req.Deadline); late > 400*time.Millisecond {
		t.Errorf("Do gave up %v after the deadline", late)
	}
	if n, _ := rs.Client.Exists(ctx, jobs.PhotoKey("r2"), jobs.BackdropKey("r2")).Result(); n != 0 {
		t.Errorf("%d input keys left in Redis after the timeout", n)
	}
}

// A corrupt frame is an error, not a panic or a bogus image.
func TestDecodeResultRejectsBadFrames(t *testing.T) {
	for _, b := range [][]byte{nil, {0, 0}, {0, 0, 0, 99, '{'}, {0, 0, 0, 2, 'x', 'y'}} {
		if _, err := jobs.DecodeResult(b); err == nil {
			t.Errorf("DecodeResult(%q) accepted a corrupt frame", b)
		}
	}
}

// A try of an enqueue while Redis is down fails with an error taken for
// transient (Asynq's own error has lost its cause), so Enqueue rides
// through a short Redis stop instead of failing (issue 46, TestRedisBlip's
// "enqueue: connection refused").
func TestEnqueueRidesThroughRedisStop(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1})
	defer rdb.Close()
	aq := asynq.NewClientFromRedisClient(rdb)
	ctx := context.Background()
	task := func(id string) *asynq.Task {
		return asynq.NewTask("photo:blur-plates", []byte("{}"), asynq.Queue(jobs.Queue), asynq.TaskID(id))
	}
	if err := jobs.Enqueue(ctx, rdb, aq, task("t0")); err != nil {
		t.Fatal(err)
	}
	m.Close()
	err := jobs.EnqueueOnce(ctx, rdb, aq, task("t1"))
	if err == nil || !redisha.Transient(err) {
		t.Fatalf("enqueue with Redis stopped: %v, want a transient error", err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		m.Restart()
	}()
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if err := jobs.Enqueue(rctx, rdb, aq, task("t1")); err != nil {
		t.Fatalf("enqueue through a 300 ms Redis stop: %v", err)
	}
	// The same task id again is done, not an error.
	if err := jobs.Enqueue(ctx, rdb, aq, task("t1")); err != nil {
		t.Fatalf("enqueue of a task id already queued: %v", err)
	}
}

// A task and photo that Redis lost (a master failed before its replica
// had them) are stored and enqueued again, so the call still gets its
// answer; a request lost again and again ends with ErrLost, before its
// deadline.
func TestDoEnqueuesLostTaskAgain(t *testing.T) {
	rs := redistest.New(t, 7)
	c := jobs.NewClient(rs.Client, 0)
	defer c.Close()
	ins := asynq.NewInspectorFromRedisClient(rs.Client)
	ctx := context.Background()
	photo := []byte("PHOTO")
	// lose deletes the task of that id and the photo once the task is
	// queued; archive archives the task instead, as Asynq does with a run
	// that failed without answering.
	lose := func(id, taskID string) {
		for {
			if _, err := ins.GetTaskInfo(jobs.Queue, taskID); err == nil {
				ins.DeleteTask(jobs.Queue, taskID)
				rs.Client.Del(ctx, jobs.PhotoKey(id))
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	archive := func(taskID string) {
		for {
			if _, err := ins.GetTaskInfo(jobs.Queue, taskID); err == nil {
				if err := ins.ArchiveTask(jobs.Queue, taskID); err != nil {
					t.Errorf("archive %s: %v", taskID, err)
				}
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	req := jobs.Request{ID: "r5", Photo: photo, Params: imageops.Params{Op: imageops.BlurPlates}, Deadline: time.Now().Add(10 * time.Second)}
	go func() {
		lose("r5", "r5")
		// The stand-in worker answers the second run, once its photo is back.
		for {
			_, terr := ins.GetTaskInfo(jobs.Queue, "r5.2")
			got, _ := rs.Client.Get(ctx, jobs.PhotoKey("r5")).Bytes()
			if terr == nil && bytes.Equal(got, photo) {
				jobs.Deliver(ctx, rs.Client, jobs.Payload{RequestID: "r5", Deadline: req.Deadline}, &jobs.Result{ContentType: "image/jpeg", Body: []byte("OK")})
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	start := time.Now()
	res, err := c.Do(ctx, req)
	if err != nil || string(res.Body) != "OK" {
		t.Fatalf("Do after its task was lost: %v, %v; want the second run's answer", res, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the lost task was noticed after %v, want within seconds", d)
	}

	req = jobs.Request{ID: "r6", Photo: photo, Params: imageops.Params{Op: imageops.BlurPlates}, Deadline: time.Now().Add(20 * time.Second)}
	go func() {
		lose("r6", "r6")
		archive("r6.2")
		lose("r6", "r6.3")
	}()
	_, err = c.Do(ctx, req)
	if !errors.Is(err, jobs.ErrLost) {
		t.Fatalf("Do lost three times: %v, want ErrLost", err)
	}
	if time.Now().After(req.Deadline) {
		t.Errorf("ErrLost came after the deadline")
	}
}

// A task Asynq has taken from the queue but no worker is at: Redis was
// killed as it answered a worker's dequeue, so the task is active, under a
// lease, while the worker never got it. Asynq would hand it on only after
// the lease (30 s) and its recoverer's round (a minute); Do runs it again
// once no worker has beaten for it for the heartbeat's confirm time.
func TestDoRunsAgainATaskTakenByNoWorker(t *testing.T) {
	rs := redistest.New(t, 7)
	c := jobs.NewClient(rs.Client, 0)
	defer c.Close()
	release := make(chan struct{})
	runs := make(chan string, 4)
	mux := asynq.NewServeMux()
	mux.HandleFunc(jobs.TaskType(imageops.BlurPlates), func(ctx context.Context, task *asynq.Task) error {
		id, _ := asynq.GetTaskID(ctx)
		runs <- id
		var p jobs.Payload
		if err := json.Unmarshal(task.Payload(), &p); err != nil {
			return err
		}
		if p.Run == 1 {
			// Taken, never beaten for, never answered: what a dequeue
			// whose answer was lost leaves in Asynq.
			<-release
			return nil
		}
		return jobs.Deliver(ctx, rs.Client, p, &jobs.Result{ContentType: "image/jpeg", Body: []byte("RUN2")})
	})
	srv := asynq.NewServerFromRedisClient(rs.Client, asynq.Config{Concurrency: 2, Queues: map[string]int{jobs.Queue: 1},
		LogLevel: asynq.FatalLevel, TaskCheckInterval: 10 * time.Millisecond})
	if err := srv.Start(mux); err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	defer close(release)

	req := jobs.Request{ID: "r7", Photo: []byte("PHOTO"), Params: imageops.Params{Op: imageops.BlurPlates}, Deadline: time.Now().Add(15 * time.Second)}
	start := time.Now()
	res, err := c.Do(context.Background(), req)
	took := time.Since(start)
	if err != nil || string(res.Body) != "RUN2" {
		t.Fatalf("Do with its task taken by no worker: %v, %v after %v; want the second run's answer", res, err, took)
	}
	if took > 8*time.Second {
		t.Errorf("the task no worker was at was run again after %v, want within a few heartbeats", took)
	}
	if got := []string{<-runs, <-runs}; got[0] != "r7" || got[1] != "r7.2" {
		t.Errorf("runs %v, want r7 then r7.2", got)
	}
	t.Logf("answered by the second run after %v", took.Round(time.Millisecond))
}

// On a cluster whose queue master is dead, a failed enqueue is reported
// as transient (to be tried again), though other masters answer PING; and
// once the replica has taken over it goes through.
func TestEnqueueOnClusterWithQueueMasterDown(t *testing.T) {
	redistest.SkipUnlessCluster(t)
	c := redistest.NewCluster(t)
	ctx := context.Background()
	aq := asynq.NewClientFromRedisClient(c.Client)
	defer aq.Close()
	master, err := c.MasterOf(ctx, "asynq:{"+jobs.Queue+"}:pending")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(master); err != nil {
		t.Fatal(err)
	}
	task := asynq.NewTask(jobs.TaskType(imageops.BlurPlates), []byte("{}"), asynq.Queue(jobs.Queue), asynq.TaskID("down-1"))
	// Until the replica takes over, every failure must be one to try
	// again: a PING to some node would answer, and mislead.
	failures := 0
	for deadline := time.Now().Add(20 * time.Second); ; {
		err := jobs.EnqueueOnce(ctx, c.Client, aq, task)
		if err == nil {
			break
		}
		if !redisha.Transient(err) {
			t.Fatalf("enqueue with the queue's master dead (after %d transient failures): %v, want a transient error", failures, err)
		}
		if failures++; time.Now().After(deadline) {
			t.Fatalf("enqueue still failing 20 s after the kill: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if failures == 0 {
		t.Errorf("the enqueue never failed: the test proved nothing")
	}
}

// A task queued by the release before this one (its parameters flat in the
// payload, its op outside them, its second image under LogoKey) is read by
// this release's worker as it was meant: a backdrop where its parameters
// place the car, else a design.
func TestLoadInputsOfThePreviousPayload(t *testing.T) {
	rs := redistest.New(t, 7)
	ctx := context.Background()
	for _, tc := range []struct {
		name, payload string
		want          imageops.Params
		backdrop      bool
	}{
		{"backdrop", `{"rid":"old1","op":"car-shadow","logo":true,"params":{"reflection":true,"backdrop":true,"floorY":0.9,"scale":0.5,"centerX":0.4}}`,
			imageops.Params{Op: imageops.CarShadow, Reflection: true, Backdrop: &shadow.Placement{FloorY: 0.9, Scale: 0.5, CenterX: 0.4}}, true},
		{"design", `{"rid":"old2","op":"logo-overlay","logo":true,"params":{"position":"top-left","scale":0.3,"opacity":1,"margin":0.03}}`,
			imageops.Params{Op: imageops.LogoOverlay, Overlay: paint.OverlayOptions{Position: "top-left", Scale: 0.3, Opacity: 1, Margin: 0.03}}, false},
		{"canvas", `{"rid":"old3","op":"car-cutout","params":{"crop":true,"padding":0.05,"paddingShare":true,"aspect":[4,3],"background":"#ffffff"}}`,
			imageops.Params{Op: imageops.CarCutout, Canvas: shadow.Canvas{Crop: true, Padding: 0.05, PaddingShare: true, Aspect: [2]int{4, 3}}, Background: &imageops.Colour{R: 255, G: 255, B: 255, A: 255}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p jobs.Payload
			if err := json.Unmarshal([]byte(tc.payload), &p); err != nil {
				t.Fatal(err)
			}
			p.Params.Op = p.Op // as the worker does
			if !reflect.DeepEqual(p.Params, tc.want) {
				t.Errorf("params %+v, want %+v", p.Params, tc.want)
			}
			rs.Client.Set(ctx, jobs.PhotoKey(p.RequestID), "photo", time.Minute)
			if p.HasLogo {
				rs.Client.Set(ctx, jobs.LogoKey(p.RequestID), "second", time.Minute)
			}
			in, err := jobs.LoadInputs(ctx, rs.Client, p)
			if err != nil {
				t.Fatal(err)
			}
			second := in.Design
			if tc.backdrop {
				second = in.Backdrop
			}
			if string(in.Photo) != "photo" || (p.HasLogo && string(second) != "second") || (in.Design != nil && in.Backdrop != nil) {
				t.Errorf("inputs photo %q design %q backdrop %q", in.Photo, in.Design, in.Backdrop)
			}
		})
	}
}

// Params travel through a task and come back as they were.
func TestParamsRoundTrip(t *testing.T) {
	for _, p := range []imageops.Params{
		{Op: imageops.BlurPlates, Style: imageops.StyleBlack, RequirePlate: true, Format: "png"},
		{Op: imageops.CarShadow, Reflection: true, Canvas: shadow.Canvas{Crop: true, Padding: 12, Aspect: [2]int{16, 9}}, Background: &imageops.Colour{R: 0x10, G: 0x20, B: 0x30, A: 255}},
		{Op: imageops.CarCutout, Backdrop: &shadow.Placement{FloorY: 0.7, Scale: 0.6, CenterX: 0.3}, Format: "webp"},
		{Op: imageops.LogoOverlay, Overlay: paint.OverlayOptions{Position: "center", Scale: 0.5, Opacity: 0.4, Margin: 0.1}},
		{Op: imageops.CarShadow, Plates: imageops.PlatesLogo, RequireWholeCar: true, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}},
		{Op: imageops.CarCutout, Plates: imageops.Plates{Hide: imageops.StylePixelate}, Canvas: shadow.Canvas{Crop: true}},
	} {
		data, err := json.Marshal(jobs.Payload{RequestID: "r", Op: p.Op, Params: p})
		if err != nil {
			t.Fatal(err)
		}
		var got jobs.Payload
		if err := json.Unmarshal(data, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Params, p) {
			t.Errorf("%s: got %+v, want %+v (%s)", p.Op, got.Params, p, data)
		}
	}
}

// A task's style is read with the web side's check: the wire bytes are the
// style's name, and a task naming no style of paint.Styles is refused when
// it is read, not painted as something else.
func TestParamsStyleIsChecked(t *testing.T) {
	data, err := json.Marshal(jobs.Payload{RequestID: "r", Op: imageops.BlurPlates, Params: imageops.Params{Op: imageops.BlurPlates, Style: imageops.StylePixelate}})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(data, []byte(`"style":"pixelate"`)) {
		t.Errorf("payload %s, want style written as \"pixelate\"", data)
	}
	var p jobs.Payload
	err = json.Unmarshal([]byte(`{"rid":"r","op":"blur-plates","params":{"style":"gaussian"}}`), &p)
	if err == nil || !strings.Contains(err.Error(), "style must be one of blur, pixelate, white, black") {
		t.Errorf("a task with style gaussian: got error %v, want the style check's", err)
	}
}

// plates=logo on a backdrop: the task carries the design beside the
// backdrop, and the worker reads both.
func TestLoadInputsDesignBesideBackdrop(t *testing.T) {
	rs := redistest.New(t, 7)
	ctx := context.Background()
	p := jobs.Payload{RequestID: "both", Op: imageops.CarShadow, Design: true, Backdrop: true,
		Params: imageops.Params{Op: imageops.CarShadow, Plates: imageops.PlatesLogo, Backdrop: &shadow.Placement{FloorY: 0.85, Scale: 0.8, CenterX: 0.5}}}
	rs.Client.Set(ctx, jobs.PhotoKey(p.RequestID), "photo", time.Minute)
	rs.Client.Set(ctx, jobs.DesignKey(p.RequestID), "design", time.Minute)
	rs.Client.Set(ctx, jobs.BackdropKey(p.RequestID), "backdrop", time.Minute)
	in, err := jobs.LoadInputs(ctx, rs.Client, p)
	if err != nil {
		t.Fatal(err)
	}
	if string(in.Photo) != "photo" || string(in.Design) != "design" || string(in.Backdrop) != "backdrop" {
		t.Errorf("inputs photo %q design %q backdrop %q, want all three", in.Photo, in.Design, in.Backdrop)
	}
	rs.Client.Del(ctx, jobs.DesignKey(p.RequestID))
	if _, err := jobs.LoadInputs(ctx, rs.Client, p); !errors.Is(err, jobs.ErrGone) {
		t.Errorf("the design gone: %v, want ErrGone", err)
	}
}

// A web process that has seen no task of an operation takes the pace the
// workers published: the same allowance as the worker's own, while what
// it has seen itself stays its own; a damaged record is ignored.
func TestPacePublishedAndSeeded(t *testing.T) {
	rs := redistest.New(t, 7)
	ctx := context.Background()
	var worker jobs.Pace
	for _, d := range []time.Duration{2 * time.Second, 2200 * time.Millisecond, 1800 * time.Millisecond} {
		worker.Observe(imageops.CarShadow, d)
	}
	worker.Observe(imageops.BlurPlates, 300*time.Millisecond)
	if err := jobs.PublishPace(ctx, rs.Client, &worker, imageops.CarShadow); err != nil {
		t.Fatal(err)
	}
	var web jobs.Pace
	web.Observe(imageops.BlurPlates, 100*time.Millisecond)
	if err := jobs.SeedPace(ctx, rs.Client, &web); err != nil {
		t.Fatal(err)
	}
	want, _ := worker.Own(imageops.CarShadow)
	if got, ok := web.Own(imageops.CarShadow); !ok || got.Round(time.Millisecond) != want.Round(time.Millisecond) {
		t.Errorf("seeded car-shadow allowance %v (%v), want the worker's %v", got, ok, want)
	}
	if got, _ := web.Own(imageops.BlurPlates); got > 200*time.Millisecond {
		t.Errorf("blur-plates allowance %v: the web's own pace was overwritten", got)
	}
	if _, ok := web.Own(imageops.PlateLogo); ok {
		t.Error("a pace for an operation nobody ran")
	}

	rs.Client.HSet(ctx, "cp:pace", string(imageops.PlateLogo), "NaN 1 x")
	var fresh jobs.Pace
	if err := jobs.SeedPace(ctx, rs.Client, &fresh); err != nil {
		t.Fatal(err)
	}
	if _, ok := fresh.Own(imageops.PlateLogo); ok {
		t.Error("a damaged record seeded a pace")
	}
}

package jobs_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"carphoto/internal/redistest"
	"carphoto/jobs"
)

// A result delivered by a worker reaches the waiting request intact.
func TestDoReturnsDeliveredResult(t *testing.T) {
	rs := redistest.New(t, 7)
	c := jobs.NewClient(rs.Client)
	defer c.Close()
	ctx := context.Background()
	photo := bytes.Repeat([]byte{1, 2, 3}, 1000)
	req := jobs.Request{ID: "r1", Op: jobs.OpBlurPlates, Photo: photo, Params: jobs.Params{Style: "pixelate"}, Deadline: time.Now().Add(5 * time.Second)}

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

// With no worker, Do gives up at the deadline and cleans up its inputs.
func TestDoTimesOutAtDeadline(t *testing.T) {
	rs := redistest.New(t, 7)
	c := jobs.NewClient(rs.Client)
	defer c.Close()
	ctx := context.Background()
	req := jobs.Request{ID: "r2", Op: jobs.OpCarShadow, Photo: []byte("x"), Logo: []byte("y"), Deadline: time.Now().Add(300 * time.Millisecond)}
	_, err := c.Do(ctx, req)
	if !errors.Is(err, jobs.ErrTimeout) {
		t.Fatalf("err %v, want ErrTimeout", err)
	}
	if n, _ := rs.Client.Exists(ctx, jobs.PhotoKey("r2"), jobs.LogoKey("r2")).Result(); n != 0 {
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

package server

import (
	"context"
	"testing"
	"time"

	"carphoto"
)

// A call whose deadline passed, or whose client left, while it waited for
// a photo slot ends as such, never as "at capacity"; with a slot free and
// its deadline passed it is the deadline every time, not a coin toss.
func TestTakeSlotEnds(t *testing.T) {
	s := &Server{slots: make(chan struct{}, 1), cfg: Config{RequestTimeout: time.Second}}
	passed, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Millisecond))
	defer cancel()
	for range 100 {
		if _, err := s.takeSlot(passed); carphoto.ErrorCode(err) != carphoto.EProcessingFailed {
			t.Fatalf("free slot, deadline passed: %v, want processing_failed", err)
		}
	}
	free, err := s.takeSlot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	short, cancel2 := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel2()
	if _, err := s.takeSlot(short); carphoto.ErrorCode(err) != carphoto.EProcessingFailed {
		t.Errorf("slots busy until the deadline: %v, want processing_failed", err)
	}
	gone, leave := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, leave)
	if _, err := s.takeSlot(gone); carphoto.ErrorCode(err) != carphoto.EProcessingFailed {
		t.Errorf("client gone while waiting: %v, want processing_failed", err)
	}
	free()
	if _, err := s.takeSlot(context.Background()); err != nil {
		t.Errorf("a freed slot: %v", err)
	}
}

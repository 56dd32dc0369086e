package server

import (
	"errors"
	"io"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync/atomic"

	"github.com/labstack/echo/v4"
	"golang.org/x/sync/semaphore"

	"carphoto"
	"carphoto/imageops"
)

// The photo uploads one web process holds in memory, from the first byte
// read to the call's end, share a budget of uploadMemory bytes: each call
// reserves its body's size (its Content-Length) before reading it, or,
// when it does not say, as the body arrives. A call whose reservation does
// not fit is answered 503 service_unavailable with Retry-After, uncharged
// (at once, without reading its body, when it said its length); one whose Content-Length
// passes what its body may carry is answered 413 at once. So the web's
// heap holds at most uploadMemory of uploads however many arrive (16
// concurrent 75 MB car-shadow uploads: TestUploadMemoryBounded), and once
// the last of them ends, the memory they took goes back to the system
// (giveBackUploads).
const uploadMemory = 512 << 20

// photoBodyMost is the most a photo call of op's body may carry: each of
// its files at MaxUploadBytes and the form's slack (readMultipart).
func (s *Server) photoBodyMost(op imageops.Op) int64 {
	most := int64(formSlack)
	for _, name := range photoFiles {
		if slices.Contains(acceptedFields(op), name) {
			most += s.cfg.MaxUploadBytes
		}
	}
	return most
}

// uploadBudget is the web process's share of uploadMemory.
type uploadBudget struct {
	sem  *semaphore.Weighted
	held atomic.Int64 // bytes reserved now
}

func newUploadBudget() *uploadBudget {
	return &uploadBudget{sem: semaphore.NewWeighted(uploadMemory)}
}

// reserveUpload reserves the memory of c's body, of at most most bytes,
// and returns what frees it.
func (s *Server) reserveUpload(c echo.Context, most int64) (free func(), err error) {
	r := c.Request()
	n := r.ContentLength
	if n > most {
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return nil, tooLarge("the request body", most)
	}
	b := s.uploads
	var reserved atomic.Int64
	free = func() {
		n := reserved.Swap(0)
		b.sem.Release(n)
		if b.held.Add(-n) == 0 {
			giveBackUploads()
		}
	}
	if n >= 0 {
		if !b.reserve(&reserved, n) {
			return nil, uploadsFull(c)
		}
		return free, nil
	}
	// A body that does not say its length (chunked) reserves as it
	// arrives, a step at a time: one that stalls holds what it sent.
	r.Body = &budgetReader{r: r.Body, b: b, reserved: &reserved}
	return free, nil
}

// reserve takes n more bytes of the budget for a call that holds
// *reserved, unless they are not free.
func (b *uploadBudget) reserve(reserved *atomic.Int64, n int64) bool {
	if n <= 0 {
		return true
	}
	if !b.sem.TryAcquire(n) {
		return false
	}
	reserved.Add(n)
	b.held.Add(n)
	return true
}

// budgetStep is how much a body of unknown length reserves at a time.
const budgetStep = 1 << 20

// errUploadsFull is a budgetReader's error once the budget is spent.
var errUploadsFull = errors.New("the uploads' memory budget is spent")

// budgetReader reads a body of unknown length, reserving the budget a
// step ahead of what it read.
type budgetReader struct {
	r        io.ReadCloser
	b        *uploadBudget
	reserved *atomic.Int64
	read     int64
}

func (br *budgetReader) Read(p []byte) (int, error) {
	if br.read+int64(len(p)) > br.reserved.Load() && !br.b.reserve(br.reserved, max(budgetStep, int64(len(p)))) {
		return 0, errUploadsFull
	}
	n, err := br.r.Read(p)
	br.read += int64(n)
	return n, err
}

func (br *budgetReader) Close() error { return br.r.Close() }

// uploadsFull is the 503 of a call whose upload the budget cannot take.
func uploadsFull(c echo.Context) error {
	c.Response().Header().Set("Retry-After", "1")
	c.Response().Header().Set(echo.HeaderConnection, "close")
	c.Set(ctxOverload, overloadRefused)
	return carphoto.Errorf(carphoto.EUnavailable,
		"this server is reading as many uploads as its memory allows; you were not charged, retry after Retry-After")
}

// giveBackUploads hands the heap the uploads left behind back to the
// system once none is held, when it is large: the runtime's scavenger
// would take minutes.
func giveBackUploads() {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}, {Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	if s[1].Value.Uint64()-s[0].Value.Uint64() > 128<<20 {
		debug.FreeOSMemory()
	}
}

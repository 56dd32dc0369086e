package server

import (
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
// reserves its body's size (its Content-Length, or the most its body may
// carry when it does not say) before reading it. A call whose reservation
// does not fit is answered 503 service_unavailable with Retry-After at
// once, uncharged, without reading its body; one whose Content-Length
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
	n := c.Request().ContentLength
	switch {
	case n > most:
		c.Response().Header().Set(echo.HeaderConnection, "close")
		return nil, tooLarge("the request body", most)
	case n < 0:
		n = most
	}
	n = min(n, uploadMemory)
	b := s.uploads
	if !b.sem.TryAcquire(n) {
		c.Response().Header().Set("Retry-After", "1")
		c.Response().Header().Set(echo.HeaderConnection, "close")
		c.Set(ctxOverload, overloadRefused)
		return nil, carphoto.Errorf(carphoto.EUnavailable,
			"this server is reading as many uploads as its memory allows; you were not charged, retry after Retry-After")
	}
	b.held.Add(n)
	return func() {
		b.sem.Release(n)
		if b.held.Add(-n) == 0 {
			giveBackUploads()
		}
	}, nil
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

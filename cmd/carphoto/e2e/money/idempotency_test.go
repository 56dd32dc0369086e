package money

import (
	"bytes"
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
)

// A retried call with the same Idempotency-Key gets the first answer's
// bytes and is charged once; other content under the key is refused; a
// failed call is not kept, so its retry runs again.
func TestIdempotentRetry(t *testing.T) {
	e2etest.SideBySide(t)
	s := e2etest.StartService(t, map[string]string{"MAX_IN_FLIGHT_PER_KEY": "16"})
	id, key := s.Account(t, 5)
	otherID, otherKey := s.Account(t, 5)
	photo := e2etest.CarPhoto(t)
	url := s.URL + "/v1/blur-plates"

	status, h1, first := e2etest.PostIdem(t, url, key, "order-1", e2etest.File("image", photo), e2etest.Field("style", "pixelate"))
	if status != http.StatusOK {
		t.Fatalf("first call: %d %.300s", status, first)
	}
	status, h2, again := e2etest.PostIdem(t, url, key, "order-1", e2etest.File("image", photo), e2etest.Field("style", "pixelate"))
	if status != http.StatusOK || !bytes.Equal(again, first) {
		t.Fatalf("retry: %d, %d bytes, identical %v; want 200 with the first answer's bytes", status, len(again), bytes.Equal(again, first))
	}
	if h2.Get("Idempotent-Replayed") != "true" || h2.Get("X-Credits-Charged") != h1.Get("X-Credits-Charged") ||
		h2.Get("Content-Type") != h1.Get("Content-Type") || h2.Get("X-Plates-Found") != h1.Get("X-Plates-Found") {
		t.Errorf("retry headers %v, want the first's (%v) and Idempotent-Replayed: true", h2, h1)
	}
	if got := s.Credits(t, id); got != 4 {
		t.Errorf("balance %d after a call and its retry, want 4 (charged once)", got)
	}

	status, h, body := e2etest.PostIdem(t, url, key, "order-1", e2etest.File("image", photo), e2etest.Field("style", "black"))
	e2etest.WantError(t, status, h, body, http.StatusUnprocessableEntity, "idempotency_key_reused")

	// Keys are per account.
	if status, _, body := e2etest.PostIdem(t, url, otherKey, "order-1", e2etest.File("image", photo)); status != http.StatusOK {
		t.Errorf("another account's call with the same key: %d %.300s", status, body)
	}

	// A failure was not charged and is not kept: the retry runs again.
	for range 2 {
		status, h, body := e2etest.PostIdem(t, url, key, "order-2", e2etest.File("image", e2etest.PlainJPEG(t)), e2etest.Field("requirePlate", "true"))
		e2etest.WantError(t, status, h, body, http.StatusUnprocessableEntity, "plate_not_found")
		if h.Get("Idempotent-Replayed") != "" {
			t.Errorf("a failed call was replayed")
		}
	}
	if got, other := s.Credits(t, id), s.Credits(t, otherID); got != 4 || other != 4 {
		t.Errorf("balances %d and %d, want 4 and 4", got, other)
	}
}

// Concurrent duplicates are charged once: one runs, the others are told it
// is in progress (409) or, once it has finished, get its answer.
func TestIdempotentConcurrentDuplicates(t *testing.T) {
	e2etest.SideBySide(t)
	s := e2etest.StartService(t, map[string]string{"MAX_IN_FLIGHT_PER_KEY": "16"})
	id, key := s.Account(t, 5)
	photo := e2etest.CarPhotoScaled(t, 4)
	url := s.URL + "/v1/blur-plates"

	// While the first runs, a duplicate is 409 request_in_progress.
	first := make(chan int, 1)
	go func() {
		status, _, _ := e2etest.PostIdem(t, url, key, "dup-1", e2etest.File("image", photo))
		first <- status
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		keys := s.RS.Keys(t, "cp:idem:{"+id+"}:*")
		if len(keys) == 1 && s.RS.Client.HGet(context.Background(), keys[0], "state").Val() == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first call never claimed its Idempotency-Key")
		}
		time.Sleep(2 * time.Millisecond)
	}
	status, h, body := e2etest.PostIdem(t, url, key, "dup-1", e2etest.File("image", photo))
	e2etest.WantError(t, status, h, body, http.StatusConflict, "request_in_progress")
	if got := <-first; got != http.StatusOK {
		t.Fatalf("first call: %d", got)
	}

	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			status, _, _ := e2etest.PostIdem(t, url, key, "dup-2", e2etest.File("image", photo))
			mu.Lock()
			counts[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[200] == 0 || counts[200]+counts[409] != 8 {
		t.Errorf("statuses %v, want only 200 and 409, at least one 200", counts)
	}
	if got := s.Credits(t, id); got != 3 {
		t.Errorf("balance %d, want 3: each key charged once", got)
	}
}

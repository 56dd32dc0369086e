package main

import (
	"bytes"
	"context"
	"io"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"
	"time"
)

// postIdem sends a multipart POST with an Idempotency-Key.
func postIdem(t *testing.T, url, key, idemKey string, parts ...part) (int, http.Header, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body) // a new random boundary on every call, as a real retry has
	for _, p := range parts {
		if p.filename != "" {
			w, _ := mw.CreateFormFile(p.name, p.filename)
			w.Write(p.data)
		} else {
			mw.WriteField(p.name, string(p.data))
		}
	}
	mw.Close()
	req, err := http.NewRequest(http.MethodPost, url, &body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Idempotency-Key", idemKey)
	res, err := (&http.Client{Timeout: time.Minute}).Do(req)
	if err != nil {
		t.Fatalf("POST %s: %v", url, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body of POST %s: %v", url, err)
	}
	return res.StatusCode, res.Header, b
}

// A retried call with the same Idempotency-Key gets the first answer's
// bytes and is charged once; other content under the key is refused; a
// failed call is not kept, so its retry runs again.
func TestIdempotentRetry(t *testing.T) {
	s := startService(t, map[string]string{"MAX_IN_FLIGHT_PER_KEY": "16"})
	id, key := s.account(t, 5)
	otherID, otherKey := s.account(t, 5)
	photo := carPhoto(t)
	url := s.url + "/v1/blur-plates"

	status, h1, first := postIdem(t, url, key, "order-1", file("image", photo), field("style", "pixelate"))
	if status != http.StatusOK {
		t.Fatalf("first call: %d %.300s", status, first)
	}
	status, h2, again := postIdem(t, url, key, "order-1", file("image", photo), field("style", "pixelate"))
	if status != http.StatusOK || !bytes.Equal(again, first) {
		t.Fatalf("retry: %d, %d bytes, identical %v; want 200 with the first answer's bytes", status, len(again), bytes.Equal(again, first))
	}
	if h2.Get("Idempotent-Replayed") != "true" || h2.Get("X-Credits-Charged") != h1.Get("X-Credits-Charged") ||
		h2.Get("Content-Type") != h1.Get("Content-Type") || h2.Get("X-Plates-Found") != h1.Get("X-Plates-Found") {
		t.Errorf("retry headers %v, want the first's (%v) and Idempotent-Replayed: true", h2, h1)
	}
	if got := s.credits(t, id); got != 4 {
		t.Errorf("balance %d after a call and its retry, want 4 (charged once)", got)
	}

	status, h, body := postIdem(t, url, key, "order-1", file("image", photo), field("style", "black"))
	wantError(t, status, h, body, http.StatusUnprocessableEntity, "idempotency_key_reused")

	// Keys are per account.
	if status, _, body := postIdem(t, url, otherKey, "order-1", file("image", photo)); status != http.StatusOK {
		t.Errorf("another account's call with the same key: %d %.300s", status, body)
	}

	// A failure was not charged and is not kept: the retry runs again.
	for range 2 {
		status, h, body := postIdem(t, url, key, "order-2", file("image", plainJPEG(t)), field("requirePlate", "true"))
		wantError(t, status, h, body, http.StatusUnprocessableEntity, "plate_not_found")
		if h.Get("Idempotent-Replayed") != "" {
			t.Errorf("a failed call was replayed")
		}
	}
	if got, other := s.credits(t, id), s.credits(t, otherID); got != 4 || other != 4 {
		t.Errorf("balances %d and %d, want 4 and 4", got, other)
	}
}

// Concurrent duplicates are charged once: one runs, the others are told it
// is in progress (409) or, once it has finished, get its answer.
func TestIdempotentConcurrentDuplicates(t *testing.T) {
	s := startService(t, map[string]string{"MAX_IN_FLIGHT_PER_KEY": "16"})
	id, key := s.account(t, 5)
	photo := carPhotoScaled(t, 4)
	url := s.url + "/v1/blur-plates"

	// While the first runs, a duplicate is 409 request_in_progress.
	first := make(chan int, 1)
	go func() {
		status, _, _ := postIdem(t, url, key, "dup-1", file("image", photo))
		first <- status
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		keys := s.rs.Keys(t, "cp:idem:{"+id+"}:*")
		if len(keys) == 1 && s.rs.Client.HGet(context.Background(), keys[0], "state").Val() == "running" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first call never claimed its Idempotency-Key")
		}
		time.Sleep(2 * time.Millisecond)
	}
	status, h, body := postIdem(t, url, key, "dup-1", file("image", photo))
	wantError(t, status, h, body, http.StatusConflict, "request_in_progress")
	if got := <-first; got != http.StatusOK {
		t.Fatalf("first call: %d", got)
	}

	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			status, _, _ := postIdem(t, url, key, "dup-2", file("image", photo))
			mu.Lock()
			counts[status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if counts[200] == 0 || counts[200]+counts[409] != 8 {
		t.Errorf("statuses %v, want only 200 and 409, at least one 200", counts)
	}
	if got := s.credits(t, id); got != 3 {
		t.Errorf("balance %d, want 3: each key charged once", got)
	}
}

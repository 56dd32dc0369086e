package resilience

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"sync"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
	"carphoto/internal/testenv/redistest"
)

// Sixteen concurrent 75 MB car-shadow uploads (three 25 MB files each,
// what the body may carry) from four keys against one web process: its
// peak memory stays within the uploads' budget (512 MB) and its own
// (100 MB), every call is answered (400 for the bytes that are no image,
// or 503 with Retry-After for one the budget could not take, unread),
// none charged; and the memory goes back once they are done.
func TestUploadMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("sends 1.2 GB")
	}
	rs := redistest.New(t, redisDB)
	web, s := e2etest.StartWeb(t, rs, "RATE_LIMIT_PER_MINUTE=1000")
	e2etest.StartProc(t, "worker", rs.Env())
	e2etest.WaitReady(t, s.URL)
	var ids, keys []string
	for range 4 {
		id, key := s.Account(t, 10)
		ids, keys = append(ids, id), append(keys, key)
	}
	const fileBytes = 25 << 20
	junk := bytes.Repeat([]byte("not an image "), fileBytes/13)
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for _, name := range []string{"image", "backgroundImage", "logo"} {
		w, _ := mw.CreateFormFile(name, name+".jpg")
		w.Write(junk)
	}
	mw.WriteField("plates", "logo")
	mw.Close()
	t.Logf("each upload %d MB", body.Len()>>20)
	before := rssMB(t, web)

	var mu sync.Mutex
	counts := map[int]int{}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, s.URL+"/v1/car-shadow", bytes.NewReader(body.Bytes()))
			req.Header.Set("Authorization", "Bearer "+keys[i%4])
			req.Header.Set("Content-Type", mw.FormDataContentType())
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("upload %d: %v", i, err)
				return
			}
			io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode == http.StatusServiceUnavailable && res.Header.Get("Retry-After") == "" {
				t.Errorf("upload %d: 503 without Retry-After", i)
			}
			mu.Lock()
			counts[res.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	peak := peakRSS(t, web)
	t.Logf("statuses %v; web RSS %d MB before, peak %d MB", counts, before, peak)
	for status := range counts {
		if status != http.StatusBadRequest && status != http.StatusServiceUnavailable {
			t.Errorf("answered %d, want 400 or 503", status)
		}
	}
	if bound := before + 512 + 100; peak > bound {
		t.Errorf("web peak RSS %d MB, over the bound %d MB (%d before + 512 MB of uploads + 100 MB)", peak, bound, before)
	}
	// Given back: the web frees the uploads' memory once the last ends.
	deadline := time.Now().Add(10 * time.Second)
	for rssMB(t, web) > before+100 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if after := rssMB(t, web); after > before+100 {
		t.Errorf("web RSS %d MB after the uploads, want at most %d MB (%d before + 100)", after, before+100, before)
	}
	for _, id := range ids {
		if got := s.Credits(t, id); got != 10 {
			t.Errorf("balance %d, want 10", got)
		}
	}
}

// rssMB is a process's resident memory now (VmRSS), in MB.
func rssMB(t *testing.T, p *e2etest.Proc) int {
	t.Helper()
	return int(e2etest.ProcStatus(t, p.Cmd.Process.Pid, "VmRSS") >> 10)
}

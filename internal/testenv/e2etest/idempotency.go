package e2etest

import (
	"bytes"
	"io"
	"mime/multipart"
	"net/http"
	"testing"
	"time"
)

// PostIdem sends a multipart POST with an Idempotency-Key.
func PostIdem(t *testing.T, url, key, idemKey string, parts ...Part) (int, http.Header, []byte) {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body) // a new random boundary on every call, as a real retry has
	for _, p := range parts {
		if p.Filename != "" {
			w, _ := mw.CreateFormFile(p.Name, p.Filename)
			w.Write(p.Data)
		} else {
			mw.WriteField(p.Name, string(p.Data))
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

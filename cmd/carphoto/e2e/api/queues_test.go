package api

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"carphoto/internal/testenv/e2etest"
)

const adminTokenForTests = "admin-token-for-the-tests"

// TestQueueDashboard: /admin/queues refuses without ADMIN_TOKEN, serves
// asynqmon with it (as the browser's basic-auth password), lists the photo
// queue, and changes nothing.
func TestQueueDashboard(t *testing.T) {
	s := e2etest.StartService(t, map[string]string{"ADMIN_TOKEN": adminTokenForTests})
	_, key := s.Account(t, 5)
	if status, _, body := e2etest.Post(t, s.URL+"/v1/blur-plates", key, e2etest.File("image", e2etest.CarPhoto(t))); status != http.StatusOK {
		t.Fatalf("blur-plates: %d %.200s", status, body)
	}

	get := func(client *http.Client, method, path, password string) (int, http.Header, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL+path, nil)
		if password != "" {
			req.SetBasicAuth("ops", password)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, b
	}
	checked := http.DefaultClient
	status, h, body := get(checked, http.MethodGet, "/admin/queues", "")
	e2etest.WantError(t, status, h, body, http.StatusUnauthorized, "invalid_api_key")
	if !strings.HasPrefix(h.Get("WWW-Authenticate"), "Basic ") {
		t.Errorf("WWW-Authenticate %q, want a basic-auth prompt", h.Get("WWW-Authenticate"))
	}
	status, _, _ = get(checked, http.MethodGet, "/admin/queues", "wrong-token-wrong-token")
	if status != http.StatusUnauthorized {
		t.Errorf("wrong token: %d, want 401", status)
	}
	status, h, body = get(checked, http.MethodGet, "/admin/queues", adminTokenForTests)
	if status != http.StatusOK || !strings.HasPrefix(h.Get("Content-Type"), "text/html") || !strings.Contains(string(body), "Asynq") {
		t.Fatalf("dashboard: %d %q %.200s, want asynqmon's page", status, h.Get("Content-Type"), body)
	}

	// asynqmon's own API is not ours: a plain client, outside the OpenAPI check.
	plain := &http.Client{Transport: &http.Transport{}, Timeout: 10 * time.Second}
	status, _, body = get(plain, http.MethodGet, "/admin/queues/api/queues", adminTokenForTests)
	var queues struct {
		Queues []struct {
			Queue     string `json:"queue"`
			Processed int    `json:"processed"`
		} `json:"queues"`
	}
	if err := json.Unmarshal(body, &queues); status != http.StatusOK || err != nil || len(queues.Queues) != 1 || queues.Queues[0].Queue != "photos" {
		t.Errorf("GET api/queues: %d %.300s, want the photos queue", status, body)
	}
	status, _, body = get(plain, http.MethodGet, "/admin/queues/api/queues", "")
	if status != http.StatusUnauthorized {
		t.Errorf("api without the token: %d %.100s, want 401", status, body)
	}
	// Read-only: pausing the queue is refused, whoever asks.
	status, _, _ = get(checked, http.MethodPost, "/admin/queues/api/queues/photos:pause", adminTokenForTests)
	if status != http.StatusMethodNotAllowed && status != http.StatusNotFound {
		t.Errorf("POST pause: %d, want 405 or 404", status)
	}
}

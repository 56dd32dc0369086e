package e2etest

import (
	"encoding/json"
	"net/http"
	"os"
	"testing"

	"carphoto/internal/testenv/apitest"
	"carphoto/internal/testenv/videotest"
	"carphoto/video"
)

// JobStatus is GET /v1/jobs/{id}'s answer.
type JobStatus struct {
	ID       string
	Status   string
	Progress struct{ FramesDone, FramesTotal int }
	Credits  int64
	Result   string `json:"resultUrl"`
	Code     string
	Error    string
}

// GetJob reads video job id as key: the status code and the job.
func GetJob(t *testing.T, url, key, id string) (int, JobStatus) {
	t.Helper()
	status, _, body := Do(t, http.MethodGet, url+"/v1/jobs/"+id, key, "", nil)
	var j JobStatus
	if status == 200 {
		if err := json.Unmarshal(body, &j); err != nil {
			t.Fatalf("job status is not JSON: %s", body)
		}
	}
	return status, j
}

// VideoClip skips t where ffmpeg is missing, else makes the short test
// clip (a car with a plate) and returns its path and bytes.
// CheckWebhooks holds webhook bodies to openapi.json's videoJobEnded.
func CheckWebhooks(t *testing.T, bodies ...string) {
	t.Helper()
	c, err := apitest.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bodies {
		if err := c.CheckWebhook("videoJobEnded", []byte(b)); err != nil {
			t.Errorf("a webhook's body does not match openapi.json: %v", err)
		}
	}
}

// VideoClip is the test clip (videotest) as a file and its bytes.
func VideoClip(t *testing.T) (string, []byte) {
	t.Helper()
	if err := video.Available(); err != nil {
		t.Skip(err.Error())
	}
	clip := videotest.Make(t, t.TempDir())
	data, err := os.ReadFile(clip)
	if err != nil {
		t.Fatal(err)
	}
	return clip, data
}

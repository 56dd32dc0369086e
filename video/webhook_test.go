package video_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"carphoto/video"
)

// Webhook URLs at internal addresses, in any of their IPv6 forms, are
// refused when the job is created and again when the webhook is sent.
func TestWebhookInternalAddresses(t *testing.T) {
	n := video.Notifier{Secret: []byte("test-webhook-secret-0123"), Tries: 1}
	for _, u := range []string{
		"http://127.0.0.1/",
		"http://localhost/",
		"http://[::1]/",
		"http://[64:ff9b::7f00:1]/",
		"http://[2002:7f00:1::]/",
		"http://[::127.0.0.1]/",
		"http://[::ffff:127.0.0.1]/",
		"http://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/",
		"http://[64:ff9b:1::a00:1]/",
		"http://0.0.0.0/",
		"http://[::]/",
		"http://[ff02::1]/",
		"http://100.64.0.1/",
		"http://169.254.169.254/latest/meta-data/",
	} {
		if err := n.Check(context.Background(), u); err == nil || !strings.Contains(err.Error(), "public addresses only") {
			t.Errorf("Check(%s) = %v, want refused as not public", u, err)
		}
	}
	if err := n.Check(context.Background(), "https://8.8.8.8/hook"); err != nil {
		t.Errorf("Check(a public address) = %v", err)
	}

	hit := false
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hit = true }))
	defer srv.Close()
	port := srv.URL[strings.LastIndex(srv.URL, ":"):]
	for _, u := range []string{srv.URL, "http://localhost" + port, "http://[64:ff9b::7f00:1]" + port, "http://[::127.0.0.1]" + port} {
		if err := n.Send(context.Background(), u, []byte(`{}`)); err == nil {
			t.Errorf("Send(%s) went through, want refused", u)
		}
	}
	if hit {
		t.Error("a webhook reached a loopback server")
	}
	n.AllowPrivate = true
	if err := n.Send(context.Background(), srv.URL, []byte(`{}`)); err != nil || !hit {
		t.Errorf("AllowPrivate: Send = %v, reached %v", err, hit)
	}
}

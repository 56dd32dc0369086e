package video

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"carphoto/internal/netguard"
)

// Notifier calls a job's webhookUrl when the job ends: a POST of the job's
// JSON, signed with HMAC-SHA256 of "<unix time>.<body>" under Secret in the
// header Carphoto-Signature: t=<unix time>,v1=<hex>, tried up to Tries
// times with backoff. Addresses that are not public (netguard: loopback,
// private, link-local, reserved, and their IPv6 forms) are refused, at the
// check and again when connecting (so a name that resolves elsewhere later
// cannot reach inside), unless AllowPrivate.
type Notifier struct {
	Secret       []byte
	AllowPrivate bool
	Tries        int           // default 5
	FirstBackoff time.Duration // default 1 s, doubling
}

// Check refuses a webhook URL a job could not call: not http(s), no host,
// or a host at a private address.
func (n Notifier) Check(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return fmt.Errorf("webhookUrl must be an http or https URL without credentials, not %q", raw)
	}
	if err := n.guard().CheckHost(ctx, u.Hostname()); err != nil {
		if errors.Is(err, netguard.ErrBlocked) {
			return blockedHost(fmt.Sprintf("webhookUrl: %q is a loopback, private, link-local or reserved address; webhooks go to public addresses only", u.Hostname()))
		}
		return fmt.Errorf("webhookUrl: %w", err)
	}
	return nil
}

func (n Notifier) guard() netguard.Guard { return netguard.Guard{AllowPrivate: n.AllowPrivate} }

// blockedHost is Check's error for an address the guard refuses: its text
// is the caller's message, and errors.Is finds netguard.ErrBlocked in it.
type blockedHost string

func (b blockedHost) Error() string { return string(b) }
func (b blockedHost) Unwrap() error { return netguard.ErrBlocked }

// Sign returns the Carphoto-Signature header's value for body at t.
func (n Notifier) Sign(body []byte, t time.Time) string {
	ts := strconv.FormatInt(t.Unix(), 10)
	m := hmac.New(sha256.New, n.Secret)
	m.Write([]byte(ts + "."))
	m.Write(body)
	return "t=" + ts + ",v1=" + hex.EncodeToString(m.Sum(nil))
}

// Send posts body to target until it answers 2xx, trying n.Tries times.
func (n Notifier) Send(ctx context.Context, target string, body []byte) error {
	client := &http.Client{
		Timeout:   10 * time.Second,
		Transport: n.guard().Transport(5 * time.Second),
		// A redirect could point inside: do not follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	tries, backoff := max(n.Tries, 1), n.FirstBackoff
	if n.Tries == 0 {
		tries = 5
	}
	if backoff <= 0 {
		backoff = time.Second
	}
	var last error
	for i := range tries {
		if i > 0 {
			select {
			case <-ctx.Done():
				return errors.Join(last, ctx.Err())
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("User-Agent", "carphoto-webhook/1")
		req.Header.Set("Carphoto-Signature", n.Sign(body, time.Now()))
		res, err := client.Do(req)
		if err != nil {
			last = err
			continue
		}
		res.Body.Close()
		if res.StatusCode/100 == 2 {
			return nil
		}
		last = fmt.Errorf("webhook answered %s", res.Status)
	}
	return last
}

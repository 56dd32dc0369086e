package client

// Every operation of openapi.json called through the client oapi-codegen
// generates from it with its default options (client.gen.go, written by
// cmd/carphoto's TestGeneratedGoClient, never edited), against the running
// service it names: CARPHOTO_URL, an account's CARPHOTO_KEY, ADMIN_TOKEN,
// WEBHOOK_SECRET, the samples in CARPHOTO_SAMPLES and a clip in
// CARPHOTO_VIDEO. Each answer is decoded into the generated types.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func env(t *testing.T, name string) string {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		t.Skipf("%s is not set: run by cmd/carphoto's TestGeneratedGoClient", name)
	}
	return v
}

func bearer(token string) RequestEditorFn {
	return func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

// form is a multipart body of fields and files (name → path).
func form(t *testing.T, fields map[string]string, files map[string][]byte) (string, io.Reader) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for k, v := range fields {
		mw.WriteField(k, v)
	}
	for k, data := range files {
		w, _ := mw.CreateFormFile(k, k+".bin") // application/octet-stream, as Go sends parts
		w.Write(data)
	}
	mw.Close()
	return mw.FormDataContentType(), &b
}

// want fails unless the answer has the status.
func want(t *testing.T, op string, res *http.Response, body []byte, err error, status int) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", op, err)
	}
	if res.StatusCode != status {
		t.Fatalf("%s: %d, want %d (%.300s)", op, res.StatusCode, status, body)
	}
	t.Logf("%s: %d %s", op, res.StatusCode, res.Header.Get("Content-Type"))
}

func TestEveryOperation(t *testing.T) {
	url, key, admin := env(t, "CARPHOTO_URL"), env(t, "CARPHOTO_KEY"), env(t, "ADMIN_TOKEN")
	secret, samples, clip := env(t, "WEBHOOK_SECRET"), env(t, "CARPHOTO_SAMPLES"), env(t, "CARPHOTO_VIDEO")
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	car, design, backdrop := read(filepath.Join(samples, "car.jpg")), read(filepath.Join(samples, "plate-design.png")), read(filepath.Join(samples, "backdrop.jpg"))
	ctx := context.Background()
	c, err := NewClientWithResponses(url, WithRequestEditorFn(bearer(key)))
	if err != nil {
		t.Fatal(err)
	}

	// Service and documents.
	h, err := c.HealthzWithResponse(ctx)
	want(t, "healthz", h.HTTPResponse, h.Body, err, 200)
	if h.JSON200 == nil || h.JSON200.Status != "ok" {
		t.Errorf("healthz: %s", h.Body)
	}
	rz, err := c.ReadyzWithResponse(ctx)
	want(t, "readyz", rz.HTTPResponse, rz.Body, err, 200)
	doc, err := c.GetOpenAPIWithResponse(ctx)
	want(t, "getOpenAPI", doc.HTTPResponse, doc.Body, err, 200)
	if doc.JSON200 == nil || doc.JSON200.Openapi != "3.1.0" {
		t.Errorf("getOpenAPI: openapi %v", doc.JSON200)
	}
	ref, err := c.ApiReferenceWithResponse(ctx)
	want(t, "apiReference", ref.HTTPResponse, ref.Body, err, 200)
	rs, err := c.RedocScriptWithResponse(ctx)
	want(t, "redocScript", rs.HTTPResponse, rs.Body, err, 200)
	ti, err := c.TryItWithResponse(ctx)
	want(t, "tryIt", ti.HTTPResponse, ti.Body, err, 200)
	ts, err := c.TryItScriptWithResponse(ctx)
	want(t, "tryItScript", ts.HTTPResponse, ts.Body, err, 200)
	m, err := c.MetricsWithResponse(ctx) // from loopback: no token needed
	want(t, "metrics", m.HTTPResponse, m.Body, err, 200)

	// The account and its assets.
	acct, err := c.GetAccountWithResponse(ctx)
	want(t, "getAccount", acct.HTTPResponse, acct.Body, err, 200)
	if acct.JSON200 == nil || acct.JSON200.CostPerOperation.BlurPlates != 1 {
		t.Fatalf("getAccount: %s", acct.Body)
	}
	ct, body := form(t, map[string]string{"kind": "design"}, map[string][]byte{"file": design})
	ca, err := c.CreateAssetWithBodyWithResponse(ctx, ct, body)
	want(t, "createAsset", ca.HTTPResponse, ca.Body, err, 201)
	designID := ca.JSON201.Id
	ct, body = form(t, map[string]string{"kind": "backdrop"}, map[string][]byte{"file": backdrop})
	cb, err := c.CreateAssetWithBodyWithResponse(ctx, ct, body)
	want(t, "createAsset (backdrop)", cb.HTTPResponse, cb.Body, err, 201)
	la, err := c.ListAssetsWithResponse(ctx)
	want(t, "listAssets", la.HTTPResponse, la.Body, err, 200)
	if la.JSON200 == nil || len(la.JSON200.Assets) != 2 {
		t.Errorf("listAssets: %s", la.Body)
	}
	ga, err := c.GetAssetWithResponse(ctx, designID)
	want(t, "getAsset", ga.HTTPResponse, ga.Body, err, 200)
	if ga.JSON200 == nil || ga.JSON200.Kind != "design" {
		t.Errorf("getAsset: %s", ga.Body)
	}

	// The photo operations, one with an Idempotency-Key replayed.
	idem := IdempotencyKey("goclient-blur-1")
	for range 2 {
		ct, body = form(t, map[string]string{"style": "pixelate"}, map[string][]byte{"image": car})
		bp, err := c.BlurPlatesWithBodyWithResponse(ctx, &BlurPlatesParams{IdempotencyKey: &idem}, ct, body)
		want(t, "blurPlates", bp.HTTPResponse, bp.Body, err, 200)
	}
	ct, body = form(t, map[string]string{"logoAssetId": designID}, map[string][]byte{"image": car})
	pl, err := c.PlateLogoWithBodyWithResponse(ctx, nil, ct, body)
	want(t, "plateLogo", pl.HTTPResponse, pl.Body, err, 200)
	ct, body = form(t, map[string]string{"backgroundAssetId": cb.JSON201.Id, "plates": "blur"}, map[string][]byte{"image": car})
	cs, err := c.CarShadowWithBodyWithResponse(ctx, nil, ct, body)
	want(t, "carShadow", cs.HTTPResponse, cs.Body, err, 200)
	ct, body = form(t, map[string]string{"crop": "true", "padding": "5%"}, map[string][]byte{"image": car})
	cc, err := c.CarCutoutWithBodyWithResponse(ctx, nil, ct, body)
	want(t, "carCutout", cc.HTTPResponse, cc.Body, err, 200)
	ct, body = form(t, map[string]string{"position": "top-left"}, map[string][]byte{"image": car, "logo": design})
	lo, err := c.LogoOverlayWithBodyWithResponse(ctx, nil, ct, body)
	want(t, "logoOverlay", lo.HTTPResponse, lo.Body, err, 200)
	// An error answer decodes into its type too.
	ct, body = form(t, map[string]string{"style": "sparkle"}, map[string][]byte{"image": car})
	bad, err := c.BlurPlatesWithBodyWithResponse(ctx, nil, ct, body)
	want(t, "blurPlates (bad style)", bad.HTTPResponse, bad.Body, err, 400)
	if bad.JSON400 == nil || bad.JSON400.Code != "invalid_params" {
		t.Errorf("blurPlates (bad style): %s", bad.Body)
	}

	// The video job, its webhook, its result in full and in part.
	hooks := make(chan VideoJobEnded, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ts, v1, _ := strings.Cut(strings.TrimPrefix(r.Header.Get("Carphoto-Signature"), "t="), ",v1=")
		mac := hmac.New(sha256.New, []byte(secret))
		mac.Write([]byte(ts + "."))
		mac.Write(b)
		var ev VideoJobEnded
		if hex.EncodeToString(mac.Sum(nil)) != v1 || json.Unmarshal(b, &ev) != nil {
			t.Errorf("webhook: bad signature or body %s", b)
		}
		select {
		case hooks <- ev:
		default:
		}
	}))
	defer recv.Close()
	ct, body = form(t, map[string]string{"webhookUrl": recv.URL + "/ended"}, map[string][]byte{"video": read(clip)})
	vb, err := c.VideoBlurWithBodyWithResponse(ctx, nil, ct, body)
	want(t, "videoBlur", vb.HTTPResponse, vb.Body, err, 202)
	var ended VideoJobEnded
	select {
	case ended = <-hooks:
	case <-time.After(3 * time.Minute):
		t.Fatal("no webhook within 3 minutes")
	}
	if ended.Id != vb.JSON202.Id || ended.Status != "done" {
		t.Fatalf("webhook: %+v", ended)
	}
	gj, err := c.GetJobWithResponse(ctx, vb.JSON202.Id)
	want(t, "getJob", gj.HTTPResponse, gj.Body, err, 200)
	if gj.JSON200 == nil || gj.JSON200.Status != "done" {
		t.Errorf("getJob: %s", gj.Body)
	}
	jr, err := c.GetJobResultWithResponse(ctx, vb.JSON202.Id, nil)
	want(t, "getJobResult", jr.HTTPResponse, jr.Body, err, 200)
	part := "bytes=0-99"
	jp, err := c.GetJobResultWithResponse(ctx, vb.JSON202.Id, &GetJobResultParams{Range: &part})
	want(t, "getJobResult (range)", jp.HTTPResponse, jp.Body, err, 206)
	if len(jp.Body) != 100 || !bytes.Equal(jp.Body, jr.Body[:100]) {
		t.Errorf("getJobResult (range): %d bytes, want the first 100", len(jp.Body))
	}
	past := "bytes=999999999-"
	jx, err := c.GetJobResultWithResponse(ctx, vb.JSON202.Id, &GetJobResultParams{Range: &past})
	want(t, "getJobResult (past the end)", jx.HTTPResponse, jx.Body, err, 416)
	if jx.JSON416 == nil || jx.JSON416.Code != "range_not_satisfiable" {
		t.Errorf("getJobResult (past the end): %s", jx.Body)
	}

	da, err := c.DeleteAssetWithResponse(ctx, designID)
	want(t, "deleteAsset", da.HTTPResponse, da.Body, err, 204)

	// The admin API and the queue dashboard.
	ac, err := NewClientWithResponses(url, WithRequestEditorFn(bearer(admin)))
	if err != nil {
		t.Fatal(err)
	}
	name, credits := "goclient", 3
	na, err := ac.AdminCreateAccountWithResponse(ctx, AdminCreateAccountJSONRequestBody{Name: &name, Credits: &credits})
	want(t, "adminCreateAccount", na.HTTPResponse, na.Body, err, 201)
	id := na.JSON201.AccountId
	sa, err := ac.AdminShowAccountWithResponse(ctx, id)
	want(t, "adminShowAccount", sa.HTTPResponse, sa.Body, err, 200)
	ad, err := ac.AdminAddCreditsWithResponse(ctx, id, AdminAddCreditsJSONRequestBody{Amount: 2})
	want(t, "adminAddCredits", ad.HTTPResponse, ad.Body, err, 200)
	rk, err := ac.AdminRotateKeyWithResponse(ctx, id)
	want(t, "adminRotateKey", rk.HTTPResponse, rk.Body, err, 200)
	vk, err := ac.AdminRevokeKeyWithResponse(ctx, id)
	want(t, "adminRevokeKey", vk.HTTPResponse, vk.Body, err, 200)
	limit := 10
	lg, err := ac.AdminLedgerWithResponse(ctx, id, &AdminLedgerParams{Limit: &limit})
	want(t, "adminLedger", lg.HTTPResponse, lg.Body, err, 200)
	qd, err := c.QueueDashboardWithResponse(ctx, func(_ context.Context, r *http.Request) error {
		r.SetBasicAuth("admin", admin)
		return nil
	})
	want(t, "queueDashboard", qd.HTTPResponse, qd.Body, err, 200)
}

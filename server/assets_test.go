package server_test

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"carphoto"
	"carphoto/billing"
	"carphoto/server"
)

// assetBody is an asset as the API returns it.
type assetBody struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	ContentType string    `json:"contentType"`
	Bytes       int64     `json:"bytes"`
	Width       int       `json:"width"`
	Height      int       `json:"height"`
	CreatedAt   time.Time `json:"createdAt"`
}

// designPNG returns a w×h PNG.
func designPNG(tb testing.TB, w, h int) []byte {
	tb.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewNRGBA(image.Rect(0, 0, w, h))); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// multipartFile returns a multipart body with one file field and its content type.
func multipartFile(tb testing.TB, field, filename string, data []byte) ([]byte, string) {
	tb.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	fw, err := w.CreateFormFile(field, filename)
	if err != nil {
		tb.Fatal(err)
	}
	fw.Write(data)
	w.Close()
	return buf.Bytes(), w.FormDataContentType()
}

func (e *acctEnv) upload(tb testing.TB, key, filename string, data []byte) *httptest.ResponseRecorder {
	tb.Helper()
	body, ct := multipartFile(tb, "file", filename, data)
	return e.do(tb, "POST", "/v1/assets", key, ct, body)
}

func TestAssetsLifecycle(t *testing.T) {
	e := newAcctEnv(t, server.Config{}, billing.Config{})
	id, key := e.account(t, 3)
	data := designPNG(t, 120, 30)

	var a assetBody
	rec := e.upload(t, key, "dealer-plate.png", data)
	decodeJSON(t, rec, http.StatusCreated, &a)
	if a.ID == "" || a.Name != "dealer-plate.png" || a.ContentType != "image/png" || a.Bytes != int64(len(data)) ||
		a.Width != 120 || a.Height != 30 || a.CreatedAt.IsZero() {
		t.Fatalf("created %+v, want a 120×30 image/png named dealer-plate.png", a)
	}
	if loc := rec.Header().Get("Location"); loc != "/v1/assets/"+a.ID {
		t.Fatalf("Location %q, want /v1/assets/%s", loc, a.ID)
	}

	var list struct{ Assets []assetBody }
	decodeJSON(t, e.do(t, "GET", "/v1/assets", key, "", nil), http.StatusOK, &list)
	if len(list.Assets) != 1 || list.Assets[0] != a {
		t.Fatalf("list %+v, want [%+v]", list.Assets, a)
	}
	var one assetBody
	decodeJSON(t, e.do(t, "GET", "/v1/assets/"+a.ID, key, "", nil), http.StatusOK, &one)
	if one != a {
		t.Fatalf("get %+v, want %+v", one, a)
	}
	// The saved design is what plate-logo's logoAssetId resolves to.
	if got, err := e.billing.AssetData(context.Background(), id, a.ID, billing.AssetDesign); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("AssetData: %v; want the uploaded bytes", err)
	}

	if rec := e.do(t, "DELETE", "/v1/assets/"+a.ID, key, "", nil); rec.Code != http.StatusNoContent {
		t.Fatalf("delete: status %d, want 204", rec.Code)
	}
	wantErrorJSON(t, e.do(t, "GET", "/v1/assets/"+a.ID, key, "", nil), http.StatusNotFound, carphoto.ENotFound)
	wantErrorJSON(t, e.do(t, "DELETE", "/v1/assets/"+a.ID, key, "", nil), http.StatusNotFound, carphoto.ENotFound)
	decodeJSON(t, e.do(t, "GET", "/v1/assets", key, "", nil), http.StatusOK, &list)
	if len(list.Assets) != 0 {
		t.Fatalf("after delete the list has %d assets, want 0", len(list.Assets))
	}

	// Asset calls are free.
	if a, _ := e.billing.Account(context.Background(), id); a.Credits != 3 {
		t.Fatalf("balance %d after asset calls, want 3 untouched", a.Credits)
	}
}

// TestAssetsOfOtherAccounts: another account's asset id answers exactly
// like an id that does not exist.
func TestAssetsOfOtherAccounts(t *testing.T) {
	e := newAcctEnv(t, server.Config{}, billing.Config{})
	_, mine := e.account(t, 0)
	_, theirs := e.account(t, 0)
	var a assetBody
	decodeJSON(t, e.upload(t, theirs, "theirs.png", designPNG(t, 10, 10)), http.StatusCreated, &a)

	for _, tc := range []struct{ method, path string }{
		{"GET", "/v1/assets/" + a.ID},
		{"DELETE", "/v1/assets/" + a.ID},
		{"GET", "/v1/assets/asset_aaaaaaaaaaaaaaaa"},
		{"GET", "/v1/assets/not-an-id!"},
	} {
		wantErrorJSON(t, e.do(t, tc.method, tc.path, mine, "", nil), http.StatusNotFound, carphoto.ENotFound)
	}
	var list struct{ Assets []assetBody }
	decodeJSON(t, e.do(t, "GET", "/v1/assets", mine, "", nil), http.StatusOK, &list)
	if list.Assets == nil || len(list.Assets) != 0 {
		t.Fatalf("my list %+v, want an empty array", list.Assets)
	}
	// The owner still has it.
	if rec := e.do(t, "GET", "/v1/assets/"+a.ID, theirs, "", nil); rec.Code != http.StatusOK {
		t.Fatalf("owner's get: status %d, want 200", rec.Code)
	}
}

func TestAssetUploadRefusals(t *testing.T) {
	e := newAcctEnv(t, server.Config{}, billing.Config{MaxAssetBytes: 4096, MaxAssets: 1})
	_, key := e.account(t, 0)

	big := append(designPNG(t, 8, 8), make([]byte, 5000)...)
	wantErrorJSON(t, e.upload(t, key, "big.png", big), http.StatusRequestEntityTooLarge, carphoto.EPayloadTooLarge)
	wantErrorJSON(t, e.upload(t, key, "notes.txt", []byte("not an image")), http.StatusBadRequest, carphoto.EInvalidParams)
	wantErrorJSON(t, e.do(t, "POST", "/v1/assets", key, "application/json", []byte(`{}`)), http.StatusBadRequest, carphoto.EInvalidParams)
	body, ct := multipartFile(t, "image", "x.png", designPNG(t, 8, 8))
	wantErrorJSON(t, e.do(t, "POST", "/v1/assets", key, ct, body), http.StatusBadRequest, carphoto.EInvalidParams)

	if rec := e.upload(t, key, "one.png", designPNG(t, 8, 8)); rec.Code != http.StatusCreated {
		t.Fatalf("first asset: status %d, want 201", rec.Code)
	}
	wantErrorJSON(t, e.upload(t, key, "two.png", designPNG(t, 8, 8)), http.StatusConflict, carphoto.EAssetLimitReached)
}

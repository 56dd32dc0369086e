package api

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"carphoto"
	"carphoto/billing"
	"carphoto/internal/service"
	"carphoto/internal/testenv/redistest"
	"carphoto/objstore"
)

// adminCLI runs one admin command against r and decodes its JSON output.
func adminCLI(t *testing.T, r *redistest.Server, args ...string) (map[string]any, error) {
	t.Helper()
	var out bytes.Buffer
	getenv := func(k string) string {
		if k == r.EnvName() {
			return r.URL
		}
		return ""
	}
	err := service.Run(context.Background(), args, getenv, &out, io.Discard)
	if err != nil {
		if out.Len() != 0 {
			t.Fatalf("%v failed (%v) but printed %q", args, err, out.String())
		}
		return nil, err
	}
	if strings.Count(out.String(), "\n") != 1 {
		t.Fatalf("%v printed %q, want one JSON object on one line", args, out.String())
	}
	var v map[string]any
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("%v printed %q: %v", args, out.String(), err)
	}
	return v, nil
}

func mustAdmin(t *testing.T, r *redistest.Server, args ...string) map[string]any {
	t.Helper()
	v, err := adminCLI(t, r, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return v
}

// TestAdminCommands runs the CLI the way an operator would and checks each
// command's effect through the API's own authentication and balance.
func TestAdminCommands(t *testing.T) {
	ctx := context.Background()
	r := redistest.New(t, redisDB)
	b := billing.New(r.Client, billing.Config{})

	created := mustAdmin(t, r, "accounts", "create", "--credits", "12", "--name", "Dealer B")
	id, _ := created["accountId"].(string)
	key, _ := created["apiKey"].(string)
	if id == "" || created["credits"] != 12.0 || !strings.HasPrefix(key, billing.KeyPrefix) {
		t.Fatalf("accounts create printed %v, want accountId, apiKey and credits 12 (camelCase, as the API)", created)
	}
	for _, old := range []string{"account_id", "api_key"} {
		if _, ok := created[old]; ok {
			t.Errorf("accounts create printed %v: %s, want the API's camelCase names only", created, old)
		}
	}
	if a, err := b.Authenticate(ctx, key); err != nil || a.ID != id || a.Name != "Dealer B" {
		t.Fatalf("the printed key: %+v, %v; want it to open account %s", a, err, id)
	}

	if got := mustAdmin(t, r, "credits", "add", id, "8"); got["credits"] != 20.0 || got["accountId"] != id {
		t.Fatalf("credits add printed %v, want credits 20", got)
	}
	if got := mustAdmin(t, r, "credits", "add", id, "-5"); got["credits"] != 15.0 {
		t.Fatalf("credits add -5 printed %v, want credits 15", got)
	}
	if got := mustAdmin(t, r, "credits", "show", id); got["credits"] != 15.0 || got["accountId"] != id {
		t.Fatalf("credits show printed %v, want credits 15", got)
	}

	rotated := mustAdmin(t, r, "keys", "rotate", id)
	fresh, _ := rotated["apiKey"].(string)
	if rotated["accountId"] != id || fresh == "" || fresh == key {
		t.Fatalf("keys rotate printed %v, want a new apiKey", rotated)
	}
	if _, err := b.Authenticate(ctx, key); carphoto.ErrorCode(err) != carphoto.EInvalidAPIKey {
		t.Fatalf("old key after rotate: %v, want invalid_api_key", err)
	}
	if _, err := b.Authenticate(ctx, fresh); err != nil {
		t.Fatalf("new key after rotate: %v", err)
	}

	if got := mustAdmin(t, r, "keys", "revoke", id); got["revoked"] != true || got["accountId"] != id {
		t.Fatalf("keys revoke printed %v, want revoked true", got)
	}
	if _, err := b.Authenticate(ctx, fresh); carphoto.ErrorCode(err) != carphoto.EInvalidAPIKey {
		t.Fatalf("key after revoke: %v, want invalid_api_key", err)
	}

	if got := mustAdmin(t, r, "accounts", "create"); got["credits"] != 0.0 {
		t.Fatalf("accounts create with no flags printed %v, want credits 0", got)
	}
}

func TestAdminCommandErrors(t *testing.T) {
	r := redistest.New(t, redisDB)
	id, _ := mustAdmin(t, r, "accounts", "create", "--credits", "1")["accountId"].(string)
	for _, tc := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{"credits"}, "missing subcommand"},
		{[]string{"credits", "burn", id}, "unknown command"},
		{[]string{"credits", "add", id, "lots"}, "non-zero integer"},
		{[]string{"credits", "add", id}, "ACCOUNT_ID and N"},
		{[]string{"credits", "add", id, "-2"}, "below 0"},
		{[]string{"credits", "show", "acct_nosuchaccount"}, "does not exist"},
		{[]string{"keys", "rotate", "acct_nosuchaccount"}, "does not exist"},
		{[]string{"keys", "revoke"}, "exactly one ACCOUNT_ID"},
		{[]string{"accounts", "create", "--credits", "-3"}, "0 or more"},
		{[]string{"accounts", "create", "--credit", "3"}, "flag provided but not defined"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			_, err := adminCLI(t, r, tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one saying %q", err, tc.want)
			}
		})
	}

	err := service.Run(context.Background(), []string{"credits", "show", id}, func(string) string { return "" }, &bytes.Buffer{}, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "REDIS_URL is not set") {
		t.Fatalf("without REDIS_URL: %v, want it to say REDIS_URL is not set", err)
	}
}

// TestMigrateCommand moves an account of the layout before Redis Cluster
// support, and its asset's image from Redis to the object store, and
// prints what it did; run again, it has nothing to move.
func TestMigrateCommand(t *testing.T) {
	ctx := context.Background()
	r := redistest.New(t, redisDB)
	store := t.TempDir()
	const acct = "acct_clioldlayout00000"
	image := []byte("\x89PNG an old design")
	if err := r.Client.HSet(ctx, "cp:acct:"+acct, "name", "Old", "credits", 5).Err(); err != nil {
		t.Fatal(err)
	}
	r.Client.ZAdd(ctx, "cp:assets:"+acct, redis.Z{Score: 1, Member: "asset_cliold"})
	r.Client.HSet(ctx, "cp:asset:asset_cliold", "account", acct, "name", "d.png", "content_type", "image/png",
		"bytes", len(image), "width", 1, "height", 1, "created_at", 1, "data", image)
	migrate := func() string {
		var out bytes.Buffer
		getenv := func(k string) string {
			switch k {
			case r.EnvName():
				return r.URL
			case "OBJECT_STORE":
				return store
			}
			return ""
		}
		if err := service.Run(ctx, []string{"migrate"}, getenv, &out, io.Discard); err != nil {
			t.Fatalf("carphoto migrate: %v", err)
		}
		return strings.TrimSpace(out.String())
	}
	if got, want := migrate(), `{"moved":3,"holds":0,"conflicts":0,"skipped":0,"assets":{"moved":1,"stored":0,"skipped":0}}`; got != want {
		t.Errorf("first run printed %s, want %s", got, want)
	}
	assets, err := objstore.NewLocal(filepath.Join(store, objstore.Assets))
	if err != nil {
		t.Fatal(err)
	}
	b := billing.New(r.Client, billing.Config{Assets: assets})
	if a, err := b.Account(ctx, acct); err != nil || a.Credits != 5 {
		t.Errorf("the account after carphoto migrate: %+v, %v; want 5 credits", a, err)
	}
	if got, err := b.AssetData(ctx, acct, "asset_cliold", billing.AssetDesign); err != nil || !bytes.Equal(got, image) {
		t.Errorf("the asset after carphoto migrate: %q, %v; want its image from the store", got, err)
	}
	if r.Client.HExists(ctx, "cp:asset:{"+acct+"}:asset_cliold", "data").Val() {
		t.Error("the image is still in Redis after carphoto migrate")
	}
	if got, want := migrate(), `{"moved":0,"holds":0,"conflicts":0,"skipped":0,"assets":{"moved":0,"stored":1,"skipped":0}}`; got != want {
		t.Errorf("second run printed %s, want %s", got, want)
	}
}

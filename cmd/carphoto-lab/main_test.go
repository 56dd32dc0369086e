package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
)

// The lab's commands answer: help names each benchmark, a mistyped one is
// refused naming the choices, and bench codec measures the sample photo
// both ways with the same plates found.
func TestLabCommands(t *testing.T) {
	ctx := context.Background()
	var out bytes.Buffer
	if err := run(ctx, []string{"help"}, os.Getenv, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"bench service", "bench idle", "bench plates", "bench cutout", "bench codec"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q:\n%s", want, out.String())
		}
	}
	if err := run(ctx, []string{"bench", "sideways"}, os.Getenv, &out); err == nil || !strings.Contains(err.Error(), "service, idle, plates, cutout or codec") {
		t.Errorf("bench sideways: %v, want an error naming the benchmarks", err)
	}
	if err := run(ctx, []string{"plates"}, os.Getenv, &out); err == nil {
		t.Error("plates (the service binary's command): no error")
	}
	out.Reset()
	if err := run(ctx, []string{"bench", "codec", "-n", "1", "../../docs/samples/car.jpg"}, os.Getenv, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "block path") || !strings.Contains(out.String(), "full path") || strings.Count(out.String(), "1 plate(s)") != 2 {
		t.Errorf("bench codec on the sample car:\n%s\nwant the block and the full path, each finding its one plate", out.String())
	}
}

// The lab reads the key `carphoto accounts create` prints by the API's
// camelCase name, and by the snake_case one an older binary printed.
func TestAPIKeyOf(t *testing.T) {
	for _, tc := range []struct{ out, want string }{
		{`{"accountId":"acct_1","apiKey":"cp_live_new","credits":5}`, "cp_live_new"},
		{`{"account_id":"acct_1","api_key":"cp_live_old","credits":5}`, "cp_live_old"},
	} {
		got, err := apiKeyOf([]byte(tc.out))
		if err != nil || got != tc.want {
			t.Errorf("apiKeyOf(%s) = %q, %v; want %q", tc.out, got, err, tc.want)
		}
	}
	if _, err := apiKeyOf([]byte(`{"accountId":"acct_1"}`)); err == nil {
		t.Error("apiKeyOf of an answer with no key: got no error")
	}
}

package server_test

import (
	"net/http"
	"testing"

	"carphoto/billing"
	"carphoto/server"
)

func TestGetAccount(t *testing.T) {
	e := newAcctEnv(t, server.Config{}, billing.Config{CostPerOp: map[string]int64{"car-shadow": 3}})
	id, key := e.account(t, 42)
	var got struct {
		AccountID        string           `json:"accountId"`
		Name             string           `json:"name"`
		Credits          int64            `json:"credits"`
		CostPerOperation map[string]int64 `json:"costPerOperation"`
		RateLimit        struct {
			Limit        int   `json:"limit"`
			Remaining    int   `json:"remaining"`
			ResetSeconds int64 `json:"resetSeconds"`
		} `json:"rateLimit"`
	}
	decodeJSON(t, e.do(t, "GET", "/v1/account", key, "", nil), http.StatusOK, &got)
	if got.AccountID != id || got.Name != "Test Motors" || got.Credits != 42 {
		t.Fatalf("account %+v, want %s with 42 credits", got, id)
	}
	want := map[string]int64{"blur-plates": 1, "plate-logo": 1, "car-shadow": 3}
	for op, c := range want {
		if got.CostPerOperation[op] != c {
			t.Fatalf("costPerOperation %v, want %v", got.CostPerOperation, want)
		}
	}
	if rl := got.RateLimit; rl.Limit != 60 || rl.Remaining != 59 || rl.ResetSeconds < 1 {
		t.Fatalf("rate_limit %+v, want limit 60, remaining 59 (this call counted) and a reset time", rl)
	}
}

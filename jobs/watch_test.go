package jobs

import (
	"strings"
	"testing"
	"time"
)

// Only a worker process that is gone counts as dead: a task heartbeat
// that lapses while its process beats, a clean stop, and a Redis outage
// that lost the keys are waited out; a process whose key ran out with
// Redis answering is dead, and after an outage one whose key stays missing
// with Redis answering for the key's lifetime (aliveTTL).
func TestWatchCountsOnlyProcessDeaths(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	type step struct {
		at        float64
		outage    bool // Redis did not answer at this time
		holder    string
		process   string
		want      verdict
		wantDeath int
	}
	for _, tc := range []struct {
		name  string
		steps []step
	}{
		{"killed", []step{
			{at: 0, holder: "w1"},
			{at: 4, process: "", want: died, wantDeath: 1},
		}},
		{"killed after an outage", []step{
			{at: 0, holder: "w1"},
			{at: 1, outage: true},
			{at: 5, process: ""},
			{at: 7, process: ""},
			{at: 8.5, process: "", want: died, wantDeath: 1},
		}},
		{"task beat lapses, process lives", []step{
			{at: 0, holder: "w1"},
			{at: 4, process: "1"},
			{at: 10, process: "1"},
			{at: 20, process: "1"},
		}},
		{"clean stop hands the task back", []step{
			{at: 0, holder: "w1"},
			{at: 4, process: WorkerStopped},
			{at: 10},
			{at: 11, holder: "w2"},
		}},
		{"Redis failover loses every key for a few seconds", []step{
			{at: 0, holder: "w1"},
			{at: 1, outage: true},
			{at: 3, outage: true},
			{at: 5, process: ""}, // back, empty
			{at: 5.5, outage: true},
			{at: 7, process: ""},
			{at: 8, holder: "w1"}, // the worker beat its keys back
			{at: 30, holder: "w1"},
		}},
		{"two deaths", []step{
			{at: 0, holder: "w1"},
			{at: 4, process: "", want: died, wantDeath: 1},
			{at: 5, holder: "w2"},
			{at: 9, process: "", want: died, wantDeath: 2},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var w watch
			for _, s := range tc.steps {
				if s.outage {
					w.unreachable(at(s.at))
					continue
				}
				if got := w.observe(at(s.at), s.holder, s.process); got != s.want {
					t.Fatalf("at %gs: verdict %d, want %d", s.at, got, s.want)
				}
				if s.want == died && w.deaths != s.wantDeath {
					t.Fatalf("at %gs: %d deaths, want %d", s.at, w.deaths, s.wantDeath)
				}
			}
			if !strings.HasPrefix(tc.name, "killed") && tc.name != "two deaths" && w.deaths != 0 {
				t.Errorf("%d deaths, want none", w.deaths)
			}
		})
	}
}

package e2etest

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// MetricsToken is the METRICS_TOKEN the metrics tests give the service.
const MetricsToken = "metrics-token-for-tests"

// Scrape reads url's metrics with the token and parses them as Prometheus
// does; an output the parser refuses fails the test.
func Scrape(t *testing.T, client *http.Client, url string) map[string]*dto.MetricFamily {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+MetricsToken)
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET %s: %d %q, want 200 text/plain", url, res.StatusCode, res.Header.Get("Content-Type"))
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(bytes.NewReader(body))
	if err != nil {
		t.Fatalf("the Prometheus text parser refuses the output: %v", err)
	}
	return families
}

// Series returns the metric of family name whose labels include want, or nil.
func Series(families map[string]*dto.MetricFamily, name string, want ...string) *dto.Metric {
	f := families[name]
	if f == nil {
		return nil
	}
next:
	for _, m := range f.GetMetric() {
		have := map[string]string{}
		for _, l := range m.GetLabel() {
			have[l.GetName()] = l.GetValue()
		}
		for i := 0; i+1 < len(want); i += 2 {
			if have[want[i]] != want[i+1] {
				continue next
			}
		}
		return m
	}
	return nil
}

// Value is a counter's or gauge's value, -1 when the series is absent.
func Value(families map[string]*dto.MetricFamily, name string, labels ...string) float64 {
	m := Series(families, name, labels...)
	switch {
	case m == nil:
		return -1
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return -1
}

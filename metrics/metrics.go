// Package metrics is the service's Prometheus instrumentation: what the web
// side answers and how fast, the photo pipeline (queue wait, processing,
// plates found, credits charged), refusals, Redis errors and the task
// queue's state, on one registry per process, served by Handler.
package metrics

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors of one process. A nil *Metrics records
// nothing, so code can call it unconditionally.
type Metrics struct {
	reg *prometheus.Registry

	requests       *prometheus.CounterVec
	duration       *prometheus.HistogramVec
	queueWait      *prometheus.HistogramVec
	processing     *prometheus.HistogramVec
	photosInFlight prometheus.Gauge
	plates         *prometheus.CounterVec
	credits        *prometheus.CounterVec
	refusals       *prometheus.CounterVec
	carRefusals    *prometheus.CounterVec
	redisErrors    *prometheus.CounterVec

	tasks        *prometheus.CounterVec
	taskDuration *prometheus.HistogramVec
	delivery     *prometheus.CounterVec
	overload     *prometheus.CounterVec
}

// photoBuckets span a cached small photo (tens of ms) to the request
// timeout (30 s).
var photoBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30}

// queueBuckets span an idle worker's pickup (TASK_CHECK_INTERVAL, 20 ms) to
// a backlog of many seconds.
var queueBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// New returns the metrics of a process, with the Go runtime's and the
// process's own collectors registered beside them.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_http_requests_total",
			Help: "HTTP requests answered, by operation (or route) and status.",
		}, []string{"op", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carphoto_http_request_duration_seconds",
			Help:    "Time from a request's arrival to its answer, upload included, by operation (or route) and status.",
			Buckets: photoBuckets,
		}, []string{"op", "status"}),
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carphoto_queue_wait_seconds",
			Help:    "Time a photo task waited in the queue before a worker took it, by operation.",
			Buckets: queueBuckets,
		}, []string{"op"}),
		processing: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carphoto_processing_seconds",
			Help:    "Time a worker spent on a photo task, by operation.",
			Buckets: photoBuckets,
		}, []string{"op"}),
		photosInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "carphoto_photos_in_flight",
			Help: "Photo requests this web process is working on (upload, queue and processing).",
		}),
		plates: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_plates_found_total",
			Help: "Plates found in the photos of successful calls, by operation.",
		}, []string{"op"}),
		credits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_credits_charged_total",
			Help: "Credits charged for successful calls and finished video jobs, by operation (replays of an Idempotency-Key not counted).",
		}, []string{"op"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_rate_limit_refusals_total",
			Help: "Requests refused 429 rate_limited (per-minute budget or per-key cap), by operation (or route).",
		}, []string{"op"}),
		carRefusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_car_refusals_total",
			Help: "car-cutout and car-shadow calls answered 422 car_not_found, by operation and reason (no_vehicle, too_small, scenery).",
		}, []string{"op", "reason"}),
		redisErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_redis_errors_total",
			Help: "Redis commands that failed (a missing key or an empty BLPOP is not a failure), by command.",
		}, []string{"command"}),
		tasks: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_worker_tasks_total",
			Help: "Photo tasks a worker finished, by operation and outcome (ok or the error code).",
		}, []string{"op", "outcome"}),
		taskDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "carphoto_worker_task_duration_seconds",
			Help:    "Time a worker spent on a photo task, by operation.",
			Buckets: photoBuckets,
		}, []string{"op"}),
		overload: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_overload_total",
			Help: "Photo calls answered 503 service_unavailable because the workers could not start them in time to finish within their deadline, by operation and stage: refused at arrival, withdrawn unstarted from the wait, or overran (started in time, slowed past the deadline by a busier machine).",
		}, []string{"op", "stage"}),
		delivery: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "carphoto_answer_delivery_total",
			Help: "Photo answers written, by how the wait for the client's TCP acknowledgement ended: acknowledged (charged), closed (the client closed or reset the connection first), aborted (not acknowledged by the answer's write deadline: the connection reset, the rest never sent) or unknown (the transport cannot tell: not charged).",
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		m.requests, m.duration, m.queueWait, m.processing, m.photosInFlight,
		m.plates, m.credits, m.refusals, m.carRefusals, m.redisErrors, m.tasks, m.taskDuration, m.delivery, m.overload,
	)
	return m
}

// Register adds collectors of other packages (the queue's, a worker's
// gauge) to the registry.
func (m *Metrics) Register(cs ...prometheus.Collector) {
	if m != nil {
		m.reg.MustRegister(cs...)
	}
}

// Handler serves the registry in Prometheus' text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Authorized reports whether r may read the metrics: with token empty,
// only from a loopback address (a scraper on the same host; the numbers
// tell outsiders how busy the service is and who pays for it); else only
// with "Authorization: Bearer <token>", from anywhere. Compared as SHA-256
// digests in constant time, so timing tells nothing of the token.
func Authorized(r *http.Request, token string) bool {
	if token == "" {
		return Loopback(r)
	}
	scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	want, sum := sha256.Sum256([]byte(token)), sha256.Sum256([]byte(strings.TrimSpace(got)))
	return strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare(sum[:], want[:]) == 1
}

// Loopback reports whether r came from a loopback address of this host.
func Loopback(r *http.Request) bool {
	ap, err := netip.ParseAddrPort(r.RemoteAddr)
	return err == nil && ap.Addr().Unmap().IsLoopback()
}

// Denied is the reason, for the client, that Authorized refused r.
func Denied(token string) string {
	if token == "" {
		return "without METRICS_TOKEN set on the server, /metrics answers only clients on the same host (loopback)"
	}
	return "the metrics need Authorization: Bearer <METRICS_TOKEN>"
}

// Request is what the web side learnt about one answered request.
type Request struct {
	Op       string // the photo operation, or the route's path
	Status   int
	Code     string // the error code, "" on success
	Duration time.Duration
	// Set for a photo request the worker answered.
	QueueWait, Processing time.Duration
	Worked                bool
	// Set for a charged success.
	PlatesFound int // -1 when the operation does not look for plates
	Credits     int64
	// Overload is the stage at which a photo call was answered 503 for
	// want of a worker in time (refused, withdrawn, overran), "" otherwise.
	Overload string
}

// RequestDone records an answered request.
func (m *Metrics) RequestDone(r Request) {
	if m == nil {
		return
	}
	status := itoa(r.Status)
	m.requests.WithLabelValues(r.Op, status).Inc()
	m.duration.WithLabelValues(r.Op, status).Observe(r.Duration.Seconds())
	if r.Worked {
		m.queueWait.WithLabelValues(r.Op).Observe(r.QueueWait.Seconds())
		m.processing.WithLabelValues(r.Op).Observe(r.Processing.Seconds())
	}
	if r.Credits > 0 {
		m.credits.WithLabelValues(r.Op).Add(float64(r.Credits))
		if r.PlatesFound >= 0 {
			m.plates.WithLabelValues(r.Op).Add(float64(r.PlatesFound))
		}
	}
	if r.Code == "rate_limited" {
		m.refusals.WithLabelValues(r.Op).Inc()
	}
	if r.Overload != "" {
		m.overload.WithLabelValues(r.Op, r.Overload).Inc()
	}
}

// AnswerDelivery records how the wait for a written answer's
// acknowledgement ended (server: acknowledged, closed, aborted, unknown).
func (m *Metrics) AnswerDelivery(outcome string) {
	if m == nil {
		return
	}
	m.delivery.WithLabelValues(outcome).Inc()
}

// PhotoStarted counts a photo request in flight until done is called.
func (m *Metrics) PhotoStarted() (done func()) {
	if m == nil {
		return func() {}
	}
	m.photosInFlight.Inc()
	return m.photosInFlight.Dec
}

// Charged records credits a worker captured for op (a video job's); the
// web side's are recorded by RequestDone.
func (m *Metrics) Charged(op string, credits int64) {
	if m == nil || credits <= 0 {
		return
	}
	m.credits.WithLabelValues(op).Add(float64(credits))
}

// TaskDone records a task a worker finished; outcome is "ok" or the
// result's error code.
func (m *Metrics) TaskDone(op, outcome string, processing time.Duration) {
	if m == nil {
		return
	}
	m.tasks.WithLabelValues(op, outcome).Inc()
	m.taskDuration.WithLabelValues(op).Observe(processing.Seconds())
}

// CarRefused records a studio call a worker refused with car_not_found,
// and why (imageops.RefusalReason).
func (m *Metrics) CarRefused(op, reason string) {
	if m == nil {
		return
	}
	m.carRefusals.WithLabelValues(op, reason).Inc()
}

func itoa(n int) string {
	if n >= 100 && n < 600 {
		return string([]byte{byte('0' + n/100), byte('0' + n/10%10), byte('0' + n%10)})
	}
	return "other"
}

// WorkerRunning reports running() as the tasks a worker is processing now.
func (m *Metrics) WorkerRunning(running func() float64) {
	if m == nil {
		return
	}
	m.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "carphoto_worker_tasks_running",
		Help: "Photo tasks this worker process is working on now.",
	}, running))
}

package metrics

import (
	"errors"

	"github.com/hibiken/asynq"
	"github.com/prometheus/client_golang/prometheus"
)

// QueueCollector reports an Asynq queue's state at each scrape, read with
// asynq's Inspector: tasks by state, the oldest pending task's age and the
// tasks processed and failed since the queue began.
type QueueCollector struct {
	inspector *asynq.Inspector
	queues    []string
}

// NewQueueCollector reports the given queues through inspector.
func NewQueueCollector(inspector *asynq.Inspector, queues ...string) *QueueCollector {
	return &QueueCollector{inspector: inspector, queues: queues}
}

var (
	queueTasks = prometheus.NewDesc("carphoto_queue_tasks",
		"Tasks in the queue by state (pending, active, scheduled, retry, archived, completed).", []string{"queue", "state"}, nil)
	queueLatency = prometheus.NewDesc("carphoto_queue_latency_seconds",
		"Age of the oldest pending task in the queue (0 when none waits).", []string{"queue"}, nil)
	queueProcessed = prometheus.NewDesc("carphoto_queue_processed_total",
		"Tasks processed from the queue, succeeded or failed, since it began.", []string{"queue"}, nil)
	queueFailed = prometheus.NewDesc("carphoto_queue_failed_total",
		"Tasks whose handler failed, since the queue began.", []string{"queue"}, nil)
	queueUp = prometheus.NewDesc("carphoto_queue_up",
		"1 when the queue's state could be read from Redis at this scrape, else 0.", []string{"queue"}, nil)
)

// Describe implements prometheus.Collector.
func (q *QueueCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{queueTasks, queueLatency, queueProcessed, queueFailed, queueUp} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. A queue no task has reached yet
// reads as empty.
func (q *QueueCollector) Collect(ch chan<- prometheus.Metric) {
	for _, name := range q.queues {
		info, err := q.inspector.GetQueueInfo(name)
		if errors.Is(err, asynq.ErrQueueNotFound) {
			info, err = &asynq.QueueInfo{Queue: name}, nil
		}
		if err != nil {
			ch <- prometheus.MustNewConstMetric(queueUp, prometheus.GaugeValue, 0, name)
			continue
		}
		ch <- prometheus.MustNewConstMetric(queueUp, prometheus.GaugeValue, 1, name)
		for state, n := range map[string]int{
			"pending": info.Pending, "active": info.Active, "scheduled": info.Scheduled,
			"retry": info.Retry, "archived": info.Archived, "completed": info.Completed,
		} {
			ch <- prometheus.MustNewConstMetric(queueTasks, prometheus.GaugeValue, float64(n), name, state)
		}
		ch <- prometheus.MustNewConstMetric(queueLatency, prometheus.GaugeValue, info.Latency.Seconds(), name)
		ch <- prometheus.MustNewConstMetric(queueProcessed, prometheus.CounterValue, float64(info.ProcessedTotal), name)
		ch <- prometheus.MustNewConstMetric(queueFailed, prometheus.CounterValue, float64(info.FailedTotal), name)
	}
}

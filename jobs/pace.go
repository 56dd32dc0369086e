package jobs

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/imageops"
)

// paceAlpha is the weight of the latest task in the pace's moving
// averages: about the last ten tasks count.
const paceAlpha = 0.2

// Pace is what one process has seen of the workers' processing times: a
// moving average and mean deviation per operation, and one over every task (the cost of an unknown mix queued ahead). The zero Pace has
// seen nothing; it is safe for concurrent use.
type Pace struct {
	mu  sync.Mutex
	ops map[imageops.Op]*average
	all average
}

// average is an exponentially weighted mean and mean absolute deviation,
// in seconds.
type average struct {
	mean, dev float64
	n         int
}

func (a *average) add(x float64) {
	if a.n == 0 {
		a.mean, a.dev = x, x/4
	} else {
		d := x - a.mean
		a.mean += paceAlpha * d
		a.dev += paceAlpha * (math.Abs(d) - a.dev)
	}
	a.n++
}

// Observe records a task of op that took d on its worker.
func (p *Pace) Observe(op imageops.Op, d time.Duration) {
	if d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ops == nil {
		p.ops = map[imageops.Op]*average{}
	}
	a := p.ops[op]
	if a == nil {
		a = &average{}
		p.ops[op] = a
	}
	a.add(d.Seconds())
	p.all.add(d.Seconds())
}

// Own is how long a task of op should be given to run: its mean and two
// mean deviations; ok false before any task of op was seen.
func (p *Pace) Own(op imageops.Op) (d time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	a := p.ops[op]
	if a == nil {
		return 0, false
	}
	return seconds(a.mean + 2*a.dev), true
}

// Mean is the mean processing time of any task, zero before any was seen.
func (p *Pace) Mean() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return seconds(p.all.mean)
}

func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// The workers' pace in Redis: each worker publishes its averages after
// every task (PublishPace), and a web process that has seen no task of an
// operation yet (one just started, or one behind a load balancer that
// sent it none) seeds its own pace from them (SeedPace), so that its
// first calls are admitted or refused by what the workers take now
// rather than by a guess.

// paceKey is the hash of the published averages: a field per operation,
// and allField for every task.
const (
	paceKey   = "cp:pace"
	allField  = "*"
	paceTTL   = time.Hour // a fleet idle this long has a pace worth nothing
	paceWrite = 500 * time.Millisecond
)

// PublishPace writes p's averages of op and of all tasks to Redis, within
// a short deadline of its own (a pace not published is only a web process
// left guessing for longer).
func PublishPace(ctx context.Context, rdb redis.UniversalClient, p *Pace, op imageops.Op) error {
	p.mu.Lock()
	a, all := p.ops[op], p.all
	p.mu.Unlock()
	if a == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), paceWrite)
	defer cancel()
	pipe := rdb.TxPipeline()
	pipe.HSet(ctx, paceKey, string(op), a.encode(), allField, all.encode())
	pipe.Expire(ctx, paceKey, paceTTL)
	_, err := pipe.Exec(ctx)
	return err
}

// SeedPace gives p, for each operation it has seen no task of, the
// averages the workers published; what p has seen itself is left as it
// is.
func SeedPace(ctx context.Context, rdb redis.UniversalClient, p *Pace) error {
	fields, err := rdb.HGetAll(ctx, paceKey).Result()
	if err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for f, v := range fields {
		a, ok := decodeAverage(v)
		if !ok {
			continue
		}
		if f == allField {
			if p.all.n == 0 {
				p.all = a
			}
			continue
		}
		op := imageops.Op(f)
		if p.ops == nil {
			p.ops = map[imageops.Op]*average{}
		}
		if p.ops[op] == nil {
			p.ops[op] = &a
		}
	}
	return nil
}

// Seeded reports whether p has a pace for op, seen or seeded.
func (p *Pace) Seeded(op imageops.Op) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ops[op] != nil
}

func (a average) encode() string {
	return strconv.FormatFloat(a.mean, 'g', 6, 64) + " " + strconv.FormatFloat(a.dev, 'g', 6, 64) + " " + strconv.Itoa(a.n)
}

func decodeAverage(s string) (average, bool) {
	f := strings.Fields(s)
	if len(f) != 3 {
		return average{}, false
	}
	mean, err1 := strconv.ParseFloat(f[0], 64)
	dev, err2 := strconv.ParseFloat(f[1], 64)
	n, err3 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || err3 != nil || !(mean > 0) || !(dev >= 0) || n < 1 || mean > 3600 {
		return average{}, false
	}
	return average{mean: mean, dev: dev, n: n}, true
}

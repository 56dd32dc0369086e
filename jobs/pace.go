package jobs

import (
	"math"
	"sync"
	"time"

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

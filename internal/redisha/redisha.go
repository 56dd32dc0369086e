// Package redisha holds what carphoto's Redis code needs to run the same on
// one Redis and on a Redis Cluster, through a failover: which errors are
// worth trying again (Transient), writes that wait for a replica before
// they count (Durable), and the hash-slot arithmetic behind key names that
// must share a slot (Slot, SlotTag).
package redisha

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Transient reports whether err says Redis could not be reached or is not
// ready to answer yet (starting, loading its data, failing over, a slot
// moving), so that the same command may succeed a moment later.
func Transient(err error) bool {
	if err == nil || errors.Is(err, redis.Nil) || errors.Is(err, redis.ErrClosed) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrNotReplicated) {
		return true
	}
	var aborted *abortedTx
	if errors.As(err, &aborted) {
		// Discarded for its commands' errors: worth trying again when
		// each was (LOADING while Redis loads its data after a restart).
		for _, e := range aborted.queued {
			if !Transient(e) {
				return false
			}
		}
		return len(aborted.queued) > 0
	}
	var ne net.Error
	if errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return true
	}
	var re redis.Error
	if errors.As(err, &re) {
		for _, busy := range []string{"LOADING", "TRYAGAIN", "CLUSTERDOWN", "MASTERDOWN", "READONLY", "MOVED", "ASK"} {
			if strings.HasPrefix(re.Error(), busy) {
				return true
			}
		}
	}
	return false
}

// Exec runs pipe, a transaction (TxPipeline), as pipe.Exec does. When
// Redis discarded the transaction (EXECABORT: a queued command was
// refused, as every command is while Redis loads its data), the error
// carries the refused commands' own errors, so that Transient tells a
// Redis not ready (LOADING, a lost connection: try again) from a command
// that is wrong (not retried).
func Exec(ctx context.Context, pipe redis.Pipeliner) ([]redis.Cmder, error) {
	cmds, err := pipe.Exec(ctx)
	if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		return cmds, err
	}
	aborted := &abortedTx{err: err}
	for _, c := range cmds {
		if e := c.Err(); e != nil && !strings.HasPrefix(e.Error(), "EXECABORT") {
			aborted.queued = append(aborted.queued, e)
		}
	}
	return cmds, aborted
}

// abortedTx is an EXECABORT with the errors its queued commands got.
type abortedTx struct {
	err    error
	queued []error
}

func (e *abortedTx) Error() string {
	return fmt.Sprintf("%v (queued commands: %v)", e.err, errors.Join(e.queued...))
}

func (e *abortedTx) Unwrap() error { return e.err }

// ErrNotReplicated is returned by Durable when the write was made on the
// master but no replica confirmed it in time while one is connected: the
// write may still be lost with the master, so the caller tries the
// (idempotent) write again or reports a failure.
var ErrNotReplicated = errors.New("redis: the write was not confirmed by a replica in time")

// Durability is how writes that must survive a failover are made: after
// each, WAIT for Replicas replicas for at most Timeout. Replicas 0 (one
// Redis, no replica) makes Durable a plain script run. Use one Durability
// per process (by pointer): it remembers which masters have too few
// replicas.
type Durability struct {
	Replicas int
	Timeout  time.Duration
	// Degraded, when set, is told (at most once a second per master) of
	// writes made while their master had fewer replicas connected than
	// Replicas (after a failover, before a new replica joins): they were
	// accepted on the replicas there are, as nothing more could confirm
	// them.
	Degraded func(master string, connected int)

	mu    sync.Mutex
	short map[string]shortOf // masters seen with fewer replicas than Replicas
}

type shortOf struct {
	connected int
	at        time.Time
}

// recheckShort is how often a master known to lack replicas is asked
// again (ROLE) before a write, instead of letting each write wait out
// Timeout for a replica that is not there.
const recheckShort = time.Second

// Durable runs script on the master of keys[0] and, with d.Replicas set,
// WAITs on the same connection for the replicas to have it: WAIT counts
// only the connection's own writes, so the script and the WAIT go in one
// pipeline to one node (a MULTI would not do: WAIT in a transaction does
// not block). All keys must share keys[0]'s slot.
//
// When fewer replicas than wanted confirm it but that many are connected,
// it returns ErrNotReplicated along with the script's answer; when the
// master has fewer connected (a shard that lost one), the write counts
// once the replicas it has confirm it, and d.Degraded is told.
func (d *Durability) Durable(ctx context.Context, rdb redis.UniversalClient, script *redis.Script, keys []string, args ...any) (*redis.Cmd, error) {
	if d.Replicas <= 0 {
		cmd := script.Run(ctx, rdb, keys, args...)
		return cmd, cmd.Err()
	}
	var node redis.UniversalClient = rdb
	addr := ""
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		m, err := cc.MasterForKey(ctx, keys[0])
		if err != nil {
			return nil, err
		}
		node, addr = m, m.Options().Addr
	} else if c, ok := rdb.(*redis.Client); ok {
		addr = c.Options().Addr
	}
	want := d.wanted(ctx, node, addr)
	run := func(eval func(p redis.Pipeliner) *redis.Cmd) (*redis.Cmd, *redis.IntCmd, error) {
		p := node.Pipeline()
		cmd := eval(p)
		var w *redis.IntCmd
		if want > 0 {
			w = p.(interface {
				Wait(context.Context, int, time.Duration) *redis.IntCmd
			}).Wait(ctx, want, d.Timeout)
		}
		_, err := p.Exec(ctx)
		if cmd.Err() != nil {
			return cmd, w, cmd.Err()
		}
		return cmd, w, err
	}
	cmd, w, err := run(func(p redis.Pipeliner) *redis.Cmd { return p.EvalSha(ctx, script.Hash(), keys, args...) })
	if err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT") {
		cmd, w, err = run(func(p redis.Pipeliner) *redis.Cmd { return script.Eval(ctx, p, keys, args...) })
	}
	if err != nil {
		if cc, ok := rdb.(*redis.ClusterClient); ok && Transient(err) {
			cc.ReloadState(ctx) // the slot may have a new master
		}
		return cmd, err
	}
	if w == nil || int(w.Val()) >= want {
		return cmd, nil
	}
	// Fewer confirmed than asked: a replica lags, or is gone.
	connected, err := connectedReplicas(ctx, node)
	if err != nil {
		return cmd, err
	}
	if connected >= want {
		return cmd, fmt.Errorf("%w (%d of %d within %v)", ErrNotReplicated, w.Val(), want, d.Timeout)
	}
	d.noteShort(addr, connected)
	return cmd, fmt.Errorf("%w (%d of %d within %v; %d connected now)", ErrNotReplicated, w.Val(), want, d.Timeout, connected)
}

// wanted is how many replicas a write on the master at addr waits for:
// Replicas, or as many as it has when it is known to have fewer (asked
// again every recheckShort).
func (d *Durability) wanted(ctx context.Context, node redis.UniversalClient, addr string) int {
	d.mu.Lock()
	s, ok := d.short[addr]
	d.mu.Unlock()
	if !ok {
		return d.Replicas
	}
	if time.Since(s.at) >= recheckShort {
		n, err := connectedReplicas(ctx, node)
		if err != nil {
			return d.Replicas
		}
		s = d.noteShort(addr, n)
	}
	return min(s.connected, d.Replicas)
}

// noteShort records that the master at addr has connected replicas, and
// forgets it once it has enough again.
func (d *Durability) noteShort(addr string, connected int) shortOf {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := shortOf{connected: connected, at: time.Now()}
	if connected >= d.Replicas {
		delete(d.short, addr)
		return s
	}
	if d.short == nil {
		d.short = map[string]shortOf{}
	}
	d.short[addr] = s
	if d.Degraded != nil {
		d.Degraded(addr, connected)
	}
	return s
}

// connectedReplicas is the number of replicas ROLE lists on node.
func connectedReplicas(ctx context.Context, node redis.UniversalClient) (int, error) {
	v, err := node.Do(ctx, "ROLE").Slice()
	if err != nil {
		return 0, err
	}
	if len(v) < 3 || v[0] != "master" {
		return 0, fmt.Errorf("redis: ROLE says %v, not a master", v)
	}
	replicas, _ := v[2].([]any)
	return len(replicas), nil
}

// Retry runs fn until it succeeds, fails for a reason other than
// Transient, or ctx is done, with exponential backoff from 50 ms to 1 s
// between tries. It returns fn's last error.
func Retry(ctx context.Context, fn func(ctx context.Context) error) error {
	backoff := 50 * time.Millisecond
	for {
		err := fn(ctx)
		if !Transient(err) || ctx.Err() != nil {
			return err
		}
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		backoff = min(2*backoff, time.Second)
	}
}

// Slots is the number of hash slots of a Redis Cluster.
const Slots = 16384

// Slot returns the hash slot of key: CRC16 (XMODEM) of its hash tag (the
// part between the first '{' and the next '}', when not empty) or of the
// whole key, modulo 16384, as Redis Cluster computes it.
func Slot(key string) int {
	if s := strings.IndexByte(key, '{'); s >= 0 {
		if e := strings.IndexByte(key[s+1:], '}'); e > 0 {
			key = key[s+1 : s+1+e]
		}
	}
	return int(crc16(key) % Slots)
}

// SlotTag returns a short hash tag whose slot is slot: a key "...{tag}..."
// lands on the same node as every other key of that slot, which lets one
// index per slot be written in the same script as the keys it indexes.
// The tags are the first numbers, in hexadecimal, to reach each slot, the same in
// every process.
func SlotTag(slot int) string {
	tagsOnce.Do(func() {
		left := Slots
		for n := 0; left > 0; n++ {
			t := fmt.Sprintf("%x", n)
			if s := crc16(t) % Slots; tags[s] == "" {
				tags[s] = t
				left--
			}
		}
	})
	return tags[slot]
}

var (
	tagsOnce sync.Once
	tags     [Slots]string
)

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial 0), Redis Cluster's key hash.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for b := 0; b < 8; b++ {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// Heal makes cc reload its map of the cluster's slots whenever a command
// fails in a way Transient says may pass. go-redis reloads it on a MOVED
// reply, which a master that died never sends: without Heal, commands for
// its slots would go on dialling it after its replica took over, until
// the map's periodic reload.
func Heal(cc *redis.ClusterClient) { cc.AddHook(healHook{cc}) }

type healHook struct{ cc *redis.ClusterClient }

func (h healHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h healHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if Transient(err) {
			h.cc.ReloadState(ctx) // in the background, at most every 200 ms
		}
		return err
	}
}

func (h healHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if Transient(err) {
			h.cc.ReloadState(ctx)
		}
		return err
	}
}

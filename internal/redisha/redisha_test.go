package redisha_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
	"carphoto/internal/testenv/redistest"
)

// Slot agrees with Redis Cluster's own CLUSTER KEYSLOT, hash tags
// included, and every slot has a tag that lands on it.
func TestSlot(t *testing.T) {
	for key, want := range map[string]int{"foo": 12182, "{user1000}.following": 3443, "{user1000}.followers": 3443} {
		if got := redisha.Slot(key); got != want {
			t.Errorf("Slot(%q) = %d, want %d", key, got, want)
		}
	}
	if redisha.Slot("{}x") == redisha.Slot("") {
		t.Errorf("an empty tag was taken as the tag: {}x hashes whole")
	}
	for slot := 0; slot < redisha.Slots; slot++ {
		tag := redisha.SlotTag(slot)
		if got := redisha.Slot("cp:holds:{" + tag + "}"); got != slot {
			t.Fatalf("SlotTag(%d) = %q, which is slot %d", slot, tag, got)
		}
	}
}

// On a real cluster: Slot is what the servers compute; a write through
// Durable is on the replica when it returns; a replica that stays
// connected but confirms nothing makes it ErrNotReplicated; asking for
// more replicas than the master has is accepted, and said.
func TestDurableOnCluster(t *testing.T) {
	redistest.SkipUnlessCluster(t)
	c := redistest.NewCluster(t)
	ctx := context.Background()
	for i := range 50 {
		key := fmt.Sprintf("cp:acct:{acct_%d}", i*7919)
		if i%2 == 1 {
			key = fmt.Sprintf("a{}b%d{x", i) // no tag: the whole key
		}
		want, err := c.Client.ClusterKeySlot(ctx, key).Result()
		if err != nil || int(want) != redisha.Slot(key) {
			t.Fatalf("CLUSTER KEYSLOT %s = %d (%v), Slot says %d", key, want, err, redisha.Slot(key))
		}
	}

	script := redis.NewScript(`redis.call('INCR', KEYS[1]); return redis.call('INCR', KEYS[2])`)
	keys := []string{"cp:a:{t}", "cp:b:{t}"}
	d := redisha.Durability{Replicas: 1, Timeout: 500 * time.Millisecond}
	// The script is not loaded yet: Durable falls back to EVAL. A cluster
	// just started once took more than 500 ms to confirm its first write
	// (CI, 27 Nov): this one may take 5 s.
	first := redisha.Durability{Replicas: 1, Timeout: 5 * time.Second}
	if cmd, err := first.Durable(ctx, c.Client, script, keys); err != nil || cmd.Val() != int64(1) {
		t.Fatalf("Durable: %v, %v", cmd.Val(), err)
	}
	master, _ := c.MasterOf(ctx, keys[0])
	replica, err := c.ReplicaOf(ctx, master)
	if err != nil {
		t.Fatal(err)
	}
	r := redis.NewClient(&redis.Options{Addr: replica})
	defer r.Close()
	r.Do(ctx, "READONLY")
	if v, err := r.Get(ctx, keys[1]).Int(); err != nil || v != 1 {
		t.Errorf("replica %s has %s = %d (%v) right after Durable, want 1", replica, keys[1], v, err)
	}

	resume, err := c.Stall(replica)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d.Durable(ctx, c.Client, script, keys)
	resume()
	if !errors.Is(err, redisha.ErrNotReplicated) || !redisha.Transient(err) {
		t.Errorf("Durable with the replica stalled: %v, want ErrNotReplicated (transient)", err)
	}

	// Wanting more replicas than the master has: the first write finds
	// out (ErrNotReplicated, to be made again), and from then on writes
	// wait for the replica there is, without waiting out the timeout.
	var told string
	d2 := redisha.Durability{Replicas: 2, Timeout: 300 * time.Millisecond, Degraded: func(m string, n int) { told = fmt.Sprint(m, " ", n) }}
	if _, err := d2.Durable(ctx, c.Client, script, keys); !errors.Is(err, redisha.ErrNotReplicated) {
		t.Errorf("Durable wanting 2 replicas of a master with 1: %v, want ErrNotReplicated the first time", err)
	}
	if told != master+" 1" {
		t.Errorf("Degraded told %q, want %q", told, master+" 1")
	}
	start := time.Now()
	for range 5 {
		if _, err := d2.Durable(ctx, c.Client, script, keys); err != nil {
			t.Fatalf("Durable on a master known to have 1 replica of 2: %v, want accepted", err)
		}
	}
	if d := time.Since(start); d > 300*time.Millisecond {
		t.Errorf("5 writes on a master short of replicas took %v: each waited out the timeout", d)
	}
	resume, err = c.Stall(replica)
	if err != nil {
		t.Fatal(err)
	}
	_, err = d2.Durable(ctx, c.Client, script, keys)
	resume()
	if !errors.Is(err, redisha.ErrNotReplicated) {
		t.Errorf("Durable, short master, its one replica stalled: %v, want ErrNotReplicated", err)
	}
}

// Exec on a Redis: a transaction discarded for a command that is wrong is
// not worth trying again, and says which command was refused.
func TestExecWrongCommand(t *testing.T) {
	rs := redistest.New(t, 1)
	ctx := context.Background()
	pipe := rs.Client.TxPipeline()
	pipe.Set(ctx, "cp:test:a", "1", 0)
	pipe.Do(ctx, "SET", "cp:test:b") // one argument short
	_, err := redisha.Exec(ctx, pipe)
	if err == nil || redisha.Transient(err) {
		t.Fatalf("Exec of a transaction with a wrong command: %v (transient %v), want a lasting error", err, redisha.Transient(err))
	}
	if n, _ := rs.Client.Exists(ctx, "cp:test:a").Result(); n != 0 {
		t.Errorf("the transaction's other command ran")
	}
	pipe = rs.Client.TxPipeline()
	pipe.Set(ctx, "cp:test:a", "1", 0)
	if _, err := redisha.Exec(ctx, pipe); err != nil {
		t.Errorf("Exec of a good transaction: %v", err)
	}
}

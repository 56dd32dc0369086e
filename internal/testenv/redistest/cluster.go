package redistest

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
)

// Cluster is a Redis Cluster of real redis-server processes: 3 masters,
// each with one replica, on loopback ports whose cluster bus ports
// (+10000) are free too, with a node timeout of 1.5 s so that a master
// killed is replaced by its replica within a few seconds.
type Cluster struct {
	URL    string // redis://127.0.0.1:p1?addr=127.0.0.1:p2&... (go-redis cluster URL form)
	Client *redis.ClusterClient
	nodes  []*exec.Cmd
	addrs  []string
	logs   []*bytes.Buffer
}

// ClusterWanted reports whether tests should run on a Redis Cluster:
// REDIS_CLUSTER_URL names one, or REDIS_CLUSTER_TEST=1 asks for one to be
// started from redis-server.
func ClusterWanted() bool {
	return os.Getenv("REDIS_CLUSTER_URL") != "" || os.Getenv("REDIS_CLUSTER_TEST") == "1"
}

var shared struct {
	once sync.Once
	c    *Cluster
	err  error
}

// sharedCluster is the one cluster of the test process: the one at
// REDIS_CLUSTER_URL, or one started at first use that lives as long as the
// process (its servers die with it).
func sharedCluster(tb testing.TB) *Cluster {
	tb.Helper()
	shared.once.Do(func() {
		if url := os.Getenv("REDIS_CLUSTER_URL"); url != "" {
			opt, err := redis.ParseClusterURL(url)
			if err != nil {
				shared.err = fmt.Errorf("REDIS_CLUSTER_URL: %w", err)
				return
			}
			shared.c = &Cluster{URL: url, Client: redis.NewClusterClient(opt)}
			redisha.Heal(shared.c.Client)
			return
		}
		shared.c, shared.err = startCluster(os.TempDir())
	})
	if shared.err != nil {
		tb.Fatalf("redistest: cluster: %v", shared.err)
	}
	return shared.c
}

// NewCluster starts a cluster of the test's own, stopped when the test
// ends: for tests that kill its nodes. Without redis-server on PATH the
// test is skipped, saying so.
func NewCluster(tb testing.TB) *Cluster {
	tb.Helper()
	SkipUnlessCluster(tb)
	c, err := startCluster(tb.TempDir())
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	tb.Cleanup(c.Stop)
	return c
}

// SkipUnlessCluster skips tb where no cluster of its own can be started:
// redis-server or redis-cli is not on PATH. The tests that kill, stall
// or count a cluster's nodes start one each (NewCluster), so they run
// wherever Debian's redis-server is installed, as .ci/run installs it,
// whether or not the other tests run on a cluster (ClusterWanted).
func SkipUnlessCluster(tb testing.TB) {
	tb.Helper()
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			tb.Skipf("redistest: %s is not on PATH (apt-get install redis-server): no Redis Cluster to start", bin)
		}
	}
}

// startCluster starts six nodes under dir and joins them into a cluster
// with one replica per master.
func startCluster(dir string) (*Cluster, error) {
	for _, bin := range []string{"redis-server", "redis-cli"} {
		if _, err := exec.LookPath(bin); err != nil {
			return nil, fmt.Errorf("%s is not on PATH (apt-get install redis-server)", bin)
		}
	}
	dir, err := os.MkdirTemp(dir, "redis-cluster-")
	if err != nil {
		return nil, err
	}
	c := &Cluster{}
	ports, err := clusterPorts(6)
	if err != nil {
		return nil, err
	}
	for _, p := range ports {
		addr := "127.0.0.1:" + strconv.Itoa(p)
		var log bytes.Buffer
		cmd := exec.Command("redis-server", "--port", strconv.Itoa(p), "--bind", "127.0.0.1",
			"--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(dir, fmt.Sprintf("nodes-%d.conf", p)),
			"--cluster-node-timeout", "1500", "--dir", dir, "--save", "", "--appendonly", "no",
			"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0", "--loglevel", "warning")
		cmd.Stdout, cmd.Stderr = &log, &log
		// The servers die with the test process, however it ends.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			c.Stop()
			return nil, fmt.Errorf("start redis-server on %s: %w", addr, err)
		}
		go cmd.Wait()
		c.nodes, c.addrs, c.logs = append(c.nodes, cmd), append(c.addrs, addr), append(c.logs, &log)
	}
	if err := c.join(); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// clusterPorts finds n loopback ports below 55535 that are free, each with
// its bus port (+10000) free too.
func clusterPorts(n int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for tries := 0; len(ports) < n && tries < 200; tries++ {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		p := l.Addr().(*net.TCPAddr).Port
		if p >= 55535 {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+10000))
		if err != nil {
			l.Close()
			continue
		}
		held = append(held, l, bus)
		ports = append(ports, p)
	}
	if len(ports) < n {
		return nil, fmt.Errorf("found only %d of %d free port pairs (p, p+10000)", len(ports), n)
	}
	return ports, nil
}

// join waits for the nodes to answer, creates the cluster and waits until
// every node sees all slots served and every master has its replica in
// sync.
func (c *Cluster) join() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for i, addr := range c.addrs {
		if err := poll(ctx, func() error {
			r := redis.NewClient(&redis.Options{Addr: addr})
			defer r.Close()
			return r.Ping(ctx).Err()
		}); err != nil {
			return fmt.Errorf("redis-server on %s did not answer: %w\n%s", addr, err, c.logs[i])
		}
	}
	args := append([]string{"--cluster", "create"}, c.addrs...)
	args = append(args, "--cluster-replicas", "1", "--cluster-yes")
	if out, err := exec.CommandContext(ctx, "redis-cli", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("redis-cli --cluster create: %w\n%s", err, out)
	}
	for _, addr := range c.addrs {
		if err := poll(ctx, func() error {
			r := redis.NewClient(&redis.Options{Addr: addr})
			defer r.Close()
			info, err := r.ClusterInfo(ctx).Result()
			if err != nil {
				return err
			}
			if !strings.Contains(info, "cluster_state:ok") || !strings.Contains(info, "cluster_slots_ok:16384") {
				return fmt.Errorf("%s: not yet ok", addr)
			}
			return nil
		}); err != nil {
			return fmt.Errorf("cluster never became ok on %s: %w", addr, err)
		}
	}
	c.URL = "redis://" + c.addrs[0]
	for _, a := range c.addrs[1:] {
		c.URL += map[bool]string{true: "?", false: "&"}[a == c.addrs[1]] + "addr=" + a
	}
	opt, err := redis.ParseClusterURL(c.URL)
	if err != nil {
		return err
	}
	c.Client = redis.NewClusterClient(opt)
	redisha.Heal(c.Client)
	return poll(ctx, func() error { return c.synced(ctx) })
}

// synced reports an error until every master has a replica with its link up.
func (c *Cluster) synced(ctx context.Context) error {
	return c.Client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		info, err := m.Info(ctx, "replication").Result()
		if err != nil {
			return err
		}
		if !strings.Contains(info, "connected_slaves:1") || !strings.Contains(info, "state=online") {
			return fmt.Errorf("%s: replica not in sync yet", m.Options().Addr)
		}
		return nil
	})
}

// MasterOf returns the address of the master that serves key now.
func (c *Cluster) MasterOf(ctx context.Context, key string) (string, error) {
	m, err := c.Client.MasterForKey(ctx, key)
	if err != nil {
		return "", err
	}
	return m.Options().Addr, nil
}

// ReplicaOf returns the address of a replica of the master at addr, from
// the master's own INFO replication.
func (c *Cluster) ReplicaOf(ctx context.Context, addr string) (string, error) {
	r := redis.NewClient(&redis.Options{Addr: addr})
	defer r.Close()
	info, err := r.Info(ctx, "replication").Result()
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "slave0:") {
			continue
		}
		var ip, port string
		for _, f := range strings.Split(strings.TrimSpace(strings.TrimPrefix(line, "slave0:")), ",") {
			k, v, _ := strings.Cut(f, "=")
			switch k {
			case "ip":
				ip = v
			case "port":
				port = v
			}
		}
		return net.JoinHostPort(ip, port), nil
	}
	return "", fmt.Errorf("no replica of %s", addr)
}

// Stall stops the node at addr (SIGSTOP) until the returned resume is
// called: a replica that stays connected but confirms nothing.
func (c *Cluster) Stall(addr string) (resume func(), err error) {
	for i, a := range c.addrs {
		if a == addr {
			p := c.nodes[i].Process
			if err := p.Signal(syscall.SIGSTOP); err != nil {
				return nil, err
			}
			return func() { p.Signal(syscall.SIGCONT) }, nil
		}
	}
	return nil, fmt.Errorf("no node at %s", addr)
}

// Kill SIGKILLs the node at addr: no goodbye to its replica or clients.
func (c *Cluster) Kill(addr string) error {
	for i, a := range c.addrs {
		if a == addr {
			return c.nodes[i].Process.Kill()
		}
	}
	return fmt.Errorf("no node at %s", addr)
}

// WaitPromoted waits until no slot is served by addr any more and the
// cluster state is ok again, and returns how long that took.
func (c *Cluster) WaitPromoted(ctx context.Context, addr string) (time.Duration, error) {
	start := time.Now()
	err := poll(ctx, func() error {
		for _, a := range c.addrs {
			if a == addr {
				continue
			}
			r := redis.NewClient(&redis.Options{Addr: a})
			slots, err := r.ClusterSlots(ctx).Result()
			info, ierr := r.ClusterInfo(ctx).Result()
			r.Close()
			if err != nil || ierr != nil {
				continue
			}
			if !strings.Contains(info, "cluster_state:ok") {
				return fmt.Errorf("cluster state not ok on %s", a)
			}
			for _, s := range slots {
				if len(s.Nodes) > 0 && s.Nodes[0].Addr == addr {
					return fmt.Errorf("slots %d-%d still on %s", s.Start, s.End, addr)
				}
			}
			return nil
		}
		return fmt.Errorf("no node answers")
	})
	return time.Since(start), err
}

// Stop kills every node.
func (c *Cluster) Stop() {
	if c.Client != nil {
		c.Client.Close()
	}
	for _, n := range c.nodes {
		if n.Process != nil {
			n.Process.Kill()
		}
	}
}

// Flush empties every master (the cluster has only database 0).
func (c *Cluster) Flush(ctx context.Context) error {
	return c.Client.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.FlushAll(ctx).Err()
	})
}

// poll calls fn every 50 ms until it succeeds or ctx ends.
func poll(ctx context.Context, fn func() error) error {
	for {
		err := fn()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w (last: %v)", ctx.Err(), err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

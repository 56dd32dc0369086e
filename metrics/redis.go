package metrics

import (
	"context"
	"errors"
	"net"

	"github.com/redis/go-redis/v9"
)

// RedisHook counts failed Redis commands. Add it to every client of the
// process (the queue's connections are the same client).
func (m *Metrics) RedisHook() redis.Hook { return redisHook{m} }

type redisHook struct{ m *Metrics }

func (h redisHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := next(ctx, network, addr)
		if err != nil && ctx.Err() == nil {
			h.m.redisErrors.WithLabelValues("dial").Inc()
		}
		return c, err
	}
}

func (h redisHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.count(ctx, cmd.Name(), err)
		return err
	}
}

func (h redisHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.count(ctx, "pipeline", err)
		return err
	}
}

// count ignores what is not a failure of Redis: a missing key or an empty
// BLPOP (redis.Nil), a script's own error reply, and a caller that gave up.
func (h redisHook) count(ctx context.Context, name string, err error) {
	if err == nil || errors.Is(err, redis.Nil) || ctx.Err() != nil {
		return
	}
	var re redis.Error
	if errors.As(err, &re) && !isServerTrouble(re.Error()) {
		return
	}
	h.m.redisErrors.WithLabelValues(name).Inc()
}

// isServerTrouble tells the error replies that say Redis itself is in
// trouble from those that a command or script gives on purpose. NOSCRIPT
// is not trouble: go-redis answers it by sending the script itself.
func isServerTrouble(msg string) bool {
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "OOM", "BUSY", "CLUSTERDOWN", "TRYAGAIN"} {
		if len(msg) >= len(p) && msg[:len(p)] == p {
			return true
		}
	}
	return false
}

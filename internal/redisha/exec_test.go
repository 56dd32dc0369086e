package redisha

import (
	"errors"
	"io"
	"testing"
)

// replyErr is an error reply of Redis, as go-redis gives it.
type replyErr string

func (e replyErr) Error() string { return string(e) }
func (replyErr) RedisError()     {}

// A transaction Redis discarded (EXECABORT) is worth trying again exactly
// when every command it refused was refused for a passing reason: Redis
// loading its data after a restart, a connection lost; never for a
// command that is wrong.
func TestTransientAbortedTransaction(t *testing.T) {
	execAbort := replyErr("EXECABORT Transaction discarded because of previous errors.")
	loading := replyErr("LOADING Redis is loading the dataset in memory")
	wrong := replyErr("ERR wrong number of arguments for 'set' command")
	for _, c := range []struct {
		queued []error
		want   bool
	}{
		{[]error{loading, loading}, true},
		{[]error{loading, io.ErrUnexpectedEOF}, true},
		{[]error{wrong}, false},
		{[]error{loading, wrong}, false},
		{nil, false},
	} {
		err := error(&abortedTx{err: execAbort, queued: c.queued})
		if got := Transient(err); got != c.want {
			t.Errorf("Transient(EXECABORT with queued %v) = %v, want %v", c.queued, got, c.want)
		}
		if !errors.Is(err, execAbort) {
			t.Errorf("%v does not wrap the EXECABORT", err)
		}
	}
	if Transient(execAbort) {
		t.Errorf("a bare EXECABORT, its causes unknown, is transient")
	}
}

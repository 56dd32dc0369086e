// Package idempotency keeps the first answer to a request sent with an
// Idempotency-Key, so that a client retrying it (a timeout, a dropped
// connection) gets that answer again instead of doing, and paying for, the
// work twice.
//
// A key is scoped to one account. Its record lives in Redis:
//
//	cp:idem:{account_id}:<sha256(key)>  hash  fp, state (running|done), owner, status, header, body, unpaid
//
// The braces are literal: the account id is the record's Redis Cluster
// hash tag, the same as the account's billing keys.
//
// Begin claims the key atomically, so of concurrent duplicates exactly one
// runs; the others see it running. A claim whose process died lapses after
// the running TTL; a finished answer is kept for the TTL the store was made
// with (IDEMPOTENCY_TTL).
package idempotency

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
)

// State is what Begin found for a key.
type State int

const (
	// Started: the key was free and is now claimed for this request; call
	// Finish with its answer, or Abandon.
	Started State = iota
	// Replay: the key's first request has finished; Begin returns its answer.
	Replay
	// InProgress: the key's first request is still running.
	InProgress
	// Mismatch: the key was used for a request with different content.
	Mismatch
)

// Response is an answer as it is stored and replayed.
type Response struct {
	Status int
	Header map[string]string
	Body   []byte
	// Unpaid marks an answer that did not reach its client and was not
	// charged: the replay that delivers it is charged for it (Pay).
	Unpaid bool
}

// Claim is a key held by one running request.
type Claim struct {
	key, owner string
}

// Store keeps answers in Redis.
type Store struct {
	rdb     redis.UniversalClient
	ttl     time.Duration // how long a finished answer is kept
	running time.Duration // how long a claim lasts unless finished
}

// New returns a Store keeping answers for ttl; a claim whose request never
// finishes (its process died) lapses after running, which must outlast the
// longest request.
func New(rdb redis.UniversalClient, ttl, running time.Duration) *Store {
	return &Store{rdb: rdb, ttl: ttl, running: running}
}

// beginScript: KEYS[1] the record; ARGV fingerprint, owner, running TTL
// (ms). It returns {'started'}, {'mismatch'}, {'running'} or {'done',
// status, header, body}. The owner's own running claim is 'started' again:
// a Begin tried again after its answer was lost in a failover.
var beginScript = redis.NewScript(`
local r = redis.call('HMGET', KEYS[1], 'fp', 'state', 'status', 'header', 'body', 'owner')
if not r[1] then
  redis.call('HSET', KEYS[1], 'fp', ARGV[1], 'state', 'running', 'owner', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'started'}
end
if r[1] ~= ARGV[1] then return {'mismatch'} end
if r[2] ~= 'done' and r[6] == ARGV[2] then return {'started'} end
if r[2] ~= 'done' then return {'running'} end
return {'done', r[3], r[4], r[5], redis.call('HGET', KEYS[1], 'unpaid') or '0'}
`)

// finishScript: KEYS[1] the record; ARGV owner, status, header, body, TTL
// (ms), unpaid (0 or 1). It stores the answer if the claim is still the
// owner's.
var finishScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'state', 'done', 'status', ARGV[2], 'header', ARGV[3], 'body', ARGV[4], 'unpaid', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
`)

// abandonScript: KEYS[1] the record; ARGV owner. It frees a running claim.
var abandonScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] and redis.call('HGET', KEYS[1], 'state') == 'running' then
  return redis.call('DEL', KEYS[1])
end
return 0
`)

// payScript: KEYS[1] the record. It marks a stored unpaid answer paid and
// returns 1, or 0 when it was paid already (or is gone).
var payScript = redis.NewScript(`
if redis.call('HGET', KEYS[1], 'unpaid') ~= '1' then return 0 end
redis.call('HSET', KEYS[1], 'unpaid', '0')
return 1
`)

// ErrClaimLost is returned by Finish when the claim had lapsed (the request
// outlived the running TTL) and the answer was not stored.
var ErrClaimLost = errors.New("idempotency: claim lapsed before the answer was stored")

// Begin looks up the account's key for a request whose content hashes to
// fingerprint (see Fingerprint). With Started the claim is returned; with
// Replay the stored answer, and a Claim naming it for Pay. Like every
// Store method a request makes, it tries again while Redis is out of
// reach, until ctx ends.
func (s *Store) Begin(ctx context.Context, accountID, key, fingerprint string) (State, Claim, *Response, error) {
	c := Claim{key: recordKey(accountID, key), owner: rand.Text()}
	var v []any
	err := redisha.Retry(ctx, func(ctx context.Context) (err error) {
		v, err = beginScript.Run(ctx, s.rdb, []string{c.key}, fingerprint, c.owner, s.running.Milliseconds()).Slice()
		return err
	})
	if err != nil {
		return 0, Claim{}, nil, fmt.Errorf("idempotency: begin: %w", err)
	}
	switch v[0] {
	case "started":
		return Started, c, nil, nil
	case "mismatch":
		return Mismatch, Claim{}, nil, nil
	case "running":
		return InProgress, Claim{}, nil, nil
	}
	r := &Response{}
	unpaid, _ := v[4].(string)
	r.Unpaid = unpaid == "1"
	status, _ := v[1].(string)
	header, _ := v[2].(string)
	body, _ := v[3].(string)
	if _, err := fmt.Sscan(status, &r.Status); err != nil {
		return 0, Claim{}, nil, fmt.Errorf("idempotency: stored status %q: %w", status, err)
	}
	if err := json.Unmarshal([]byte(header), &r.Header); err != nil {
		return 0, Claim{}, nil, fmt.Errorf("idempotency: stored header: %w", err)
	}
	r.Body = []byte(body)
	return Replay, Claim{key: c.key}, r, nil
}

// Finish stores the claimed request's answer for the store's TTL.
func (s *Store) Finish(ctx context.Context, c Claim, r Response) error {
	header, err := json.Marshal(r.Header)
	if err != nil {
		return fmt.Errorf("idempotency: finish: %w", err)
	}
	unpaid := 0
	if r.Unpaid {
		unpaid = 1
	}
	n, err := finishScript.Run(ctx, s.rdb, []string{c.key}, c.owner, r.Status, header, r.Body, s.ttl.Milliseconds(), unpaid).Int()
	if err != nil {
		return fmt.Errorf("idempotency: finish: %w", err)
	}
	if n == 0 {
		return ErrClaimLost
	}
	return nil
}

// Pay marks the unpaid answer of a replayed key (the Claim Begin returned
// with Replay) paid, once: it reports true to the one caller that did, who
// charges for it; false when it was paid already (or when an earlier try's
// answer was lost in a failover: the customer wins).
func (s *Store) Pay(ctx context.Context, c Claim) (bool, error) {
	if c.key == "" {
		return false, nil
	}
	var n int
	err := redisha.Retry(ctx, func(ctx context.Context) (err error) {
		n, err = payScript.Run(ctx, s.rdb, []string{c.key}).Int()
		return err
	})
	if err != nil {
		return false, fmt.Errorf("idempotency: pay: %w", err)
	}
	return n == 1, nil
}

// Abandon frees the claim without an answer, so a retry runs afresh; for
// requests that failed (and were not charged). It is a no-op for the zero
// Claim and for a claim already finished.
func (s *Store) Abandon(ctx context.Context, c Claim) error {
	if c.key == "" {
		return nil
	}
	if err := abandonScript.Run(ctx, s.rdb, []string{c.key}, c.owner).Err(); err != nil {
		return fmt.Errorf("idempotency: abandon: %w", err)
	}
	return nil
}

// Fingerprint hashes a request's parts (operation, parameters, files) so
// that the same content gives the same fingerprint whatever its encoding
// on the wire (multipart boundaries differ on every send).
func Fingerprint(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		fmt.Fprintf(h, "%d:", len(p))
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

func recordKey(accountID, key string) string {
	sum := sha256.Sum256([]byte(key))
	return "cp:idem:{" + accountID + "}:" + hex.EncodeToString(sum[:])
}

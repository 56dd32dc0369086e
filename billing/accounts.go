package billing

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"carphoto"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
)

// Account is a customer: one balance, at most one working API key.
type Account struct {
	ID        string
	Name      string
	Credits   int64 // spendable now: holds in flight are already taken out
	CreatedAt time.Time
	// KeyID names the current API key in logs and rate limits without
	// revealing it; empty when the key is revoked.
	KeyID string
}

// MaxCredits is the largest balance and the largest single change: far
// above any real account, and small enough that the Lua scripts' numbers
// (doubles) stay exact and HINCRBY never overflows.
const MaxCredits = 1_000_000_000_000

// maxNameLen caps account names, which are for people, not storage.
const maxNameLen = 200

// Ledger request ids of movements not caused by an API request.
const (
	requestCreate = "create-account"
)

// CreateAccount creates an account with the given starting balance and
// returns it with its API key. The key exists in clear only in this return
// value: show it once and forget it.
func (s *Service) CreateAccount(ctx context.Context, name string, credits int64) (Account, string, error) {
	if credits < 0 || credits > MaxCredits {
		return Account{}, "", carphoto.Errorf(carphoto.EInvalidParams, "credits must be 0 or more, at most %d, not %d", MaxCredits, credits)
	}
	if len(name) > maxNameLen || !utf8.ValidString(name) {
		return Account{}, "", carphoto.Errorf(carphoto.EInvalidParams, "name must be valid UTF-8 of at most %d bytes", maxNameLen)
	}
	a := Account{ID: newID("acct"), Name: name, Credits: credits, CreatedAt: s.now().UTC().Truncate(time.Millisecond)}
	key := newAPIKey()
	hash := hashKey(key)
	a.KeyID = keyID(hash)
	// The key's index first: until the account exists it leads nowhere.
	if err := redisha.Retry(ctx, func(ctx context.Context) error {
		return s.rdb.Set(ctx, keyIndexKey(hash), a.ID, 0).Err()
	}); err != nil {
		return Account{}, "", storeErr("create account", err)
	}
	_, err := s.write(ctx, true, createScript, []string{acctKey(a.ID), ledgerKey(a.ID)},
		a.Name, a.Credits, hash, a.CreatedAt.Format(time.RFC3339Nano), unixMS(s.now()), s.cfg.LedgerMax, requestCreate)
	if err != nil {
		return Account{}, "", storeErr("create account", err)
	}
	return a, key, nil
}

// createScript writes a new account and, with a starting balance, its
// first ledger entry: KEYS[1] cp:acct:{id}, KEYS[2] its ledger; ARGV name,
// credits, key hash, created_at, now (ms), ledger cap, request id. Run
// again it changes nothing.
var createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'name', ARGV[1], 'credits', ARGV[2], 'key_hash', ARGV[3], 'created_at', ARGV[4])
if tonumber(ARGV[2]) > 0 then
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[6], '*',
    'kind', 'admin', 'request_id', ARGV[7], 'op', '', 'amount', ARGV[2],
    'delta', ARGV[2], 'balance', ARGV[2], 'hold_id', '', 'at', ARGV[5])
end
return 1
`)

// Authenticate returns the account whose current key is apiKey. Missing,
// malformed, unknown, rotated-out and revoked keys are all EInvalidAPIKey;
// the message never repeats the key.
func (s *Service) Authenticate(ctx context.Context, apiKey string) (a Account, err error) {
	err = rideThrough(ctx, func(ctx context.Context) (err error) {
		a, err = s.authenticate(ctx, apiKey)
		return err
	})
	return a, err
}

func (s *Service) authenticate(ctx context.Context, apiKey string) (Account, error) {
	if apiKey == "" {
		return Account{}, carphoto.Errorf(carphoto.EInvalidAPIKey, "no API key: send the header Authorization: Bearer <API_KEY>")
	}
	if !wellFormed(apiKey) {
		return Account{}, carphoto.Errorf(carphoto.EInvalidAPIKey, "the API key is malformed: keys start with %s and have %d more letters and digits", KeyPrefix, keyBodyLen)
	}
	// Two steps, as the index and the account live on different slots of a
	// cluster: the index names the account, then the account is read.
	hash := hashKey(apiKey)
	id, err := s.rdb.Get(ctx, keyIndexKey(hash)).Result()
	if errors.Is(err, redis.Nil) || (err == nil && !validID(id)) {
		return Account{}, errInvalidKey
	}
	if err != nil {
		return Account{}, storeErr("authenticate", err)
	}
	v, err := s.rdb.HMGet(ctx, acctKey(id), "name", "credits", "key_hash", "created_at").Result()
	if err != nil {
		return Account{}, storeErr("authenticate", err)
	}
	str := func(x any) string { s, _ := x.(string); return s }
	// The index said yes; the account must agree that this is its current
	// key. The lookup by hash is not a comparison of secrets, this is.
	if v[1] == nil || subtle.ConstantTimeCompare([]byte(str(v[2])), []byte(hash)) != 1 {
		return Account{}, errInvalidKey
	}
	return parseAccount(id, str(v[0]), str(v[1]), str(v[2]), str(v[3]))
}

var errInvalidKey = carphoto.Errorf(carphoto.EInvalidAPIKey, "the API key is not valid: it is unknown, rotated out or revoked")

// Account returns the account with the given id, ENotFound if none.
func (s *Service) Account(ctx context.Context, id string) (Account, error) {
	if !validID(id) {
		return Account{}, errNoAccount(id)
	}
	var v []any
	err := rideThrough(ctx, func(ctx context.Context) (err error) {
		v, err = s.rdb.HMGet(ctx, acctKey(id), "name", "credits", "key_hash", "created_at").Result()
		return err
	})
	if err != nil {
		return Account{}, storeErr("read account", err)
	}
	if v[1] == nil {
		return Account{}, errNoAccount(id)
	}
	str := func(x any) string { s, _ := x.(string); return s }
	return parseAccount(id, str(v[0]), str(v[1]), str(v[2]), str(v[3]))
}

func parseAccount(id, name, credits, hash, created string) (Account, error) {
	c, err := strconv.ParseInt(credits, 10, 64)
	if err != nil {
		return Account{}, fmt.Errorf("account %s: credits %q: %w", id, credits, err)
	}
	t, _ := time.Parse(time.RFC3339Nano, created) // the companion app may create accounts without it
	return Account{ID: id, Name: name, Credits: c, CreatedAt: t, KeyID: keyID(hash)}, nil
}

func errNoAccount(id string) error {
	return carphoto.Errorf(carphoto.ENotFound, "account %q does not exist", id)
}

// setKeyScript replaces an account's key hash: KEYS[1] cp:acct:{id};
// ARGV[1] the new hash ("" to revoke). It returns false when the account
// is unknown, else the hash it replaced. The account's key_hash is what
// Authenticate compares, so the switch is atomic there: no moment exists
// in which both the old and the new key work, whatever the index (on
// another slot) says meanwhile.
var setKeyScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local old = redis.call('HGET', KEYS[1], 'key_hash') or ''
redis.call('HSET', KEYS[1], 'key_hash', ARGV[1])
return old
`)

// RotateKey gives the account a new API key and returns it; the old key is
// refused from the next request on.
func (s *Service) RotateKey(ctx context.Context, accountID string) (string, error) {
	key := newAPIKey()
	if err := s.setKey(ctx, accountID, hashKey(key)); err != nil {
		return "", err
	}
	return key, nil
}

// RevokeKey leaves the account with no working key until the next RotateKey.
func (s *Service) RevokeKey(ctx context.Context, accountID string) error {
	return s.setKey(ctx, accountID, "")
}

func (s *Service) setKey(ctx context.Context, id, hash string) error {
	if !validID(id) {
		return errNoAccount(id)
	}
	// The new key's index first (it leads to an account that does not take
	// the key yet), then the switch, then the old index goes.
	if hash != "" {
		if err := redisha.Retry(ctx, func(ctx context.Context) error {
			return s.rdb.Set(ctx, keyIndexKey(hash), id, 0).Err()
		}); err != nil {
			return storeErr("set key", err)
		}
	}
	cmd, err := s.write(ctx, false, setKeyScript, []string{acctKey(id)}, hash)
	if errors.Is(err, redis.Nil) {
		if hash != "" {
			s.rdb.Del(ctx, keyIndexKey(hash))
		}
		return errNoAccount(id)
	}
	if err != nil {
		return storeErr("set key", err)
	}
	if old, _ := cmd.Text(); old != "" && old != hash {
		// Left behind, it would lead to an account that refuses the key.
		if err := redisha.Retry(ctx, func(ctx context.Context) error {
			return s.rdb.Del(ctx, keyIndexKey(old)).Err()
		}); err != nil {
			s.cfg.Log.Warn().Err(err).Str("account", id).Msg("billing: the replaced key's index stays (the key is refused all the same)")
		}
	}
	return nil
}

// addScript changes a balance by ARGV[1] unless it would go below zero:
// KEYS[1] cp:acct:{id}, KEYS[2] its ledger; ARGV: delta, request id, now
// (ms), ledger cap, MaxCredits. It returns {1, balance}, {0, balance} when
// the balance would go below zero, {-2, balance} when above MaxCredits, or
// {-1, 0} when the account is unknown.
var addScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local delta = tonumber(ARGV[1])
local bal = tonumber(redis.call('HGET', KEYS[1], 'credits') or '0')
if bal + delta < 0 then return {0, bal} end
if bal + delta > tonumber(ARGV[5]) then return {-2, bal} end
bal = redis.call('HINCRBY', KEYS[1], 'credits', ARGV[1])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[4], '*',
  'kind', 'admin', 'request_id', ARGV[2], 'op', '', 'amount', math.abs(delta),
  'delta', delta, 'balance', bal, 'hold_id', '', 'at', ARGV[3])
return {1, bal}
`)

// AddCredits changes the balance by amount (negative to take credits back,
// never below zero), records it in the ledger under requestID, and returns
// the new balance.
func (s *Service) AddCredits(ctx context.Context, accountID string, amount int64, requestID string) (int64, error) {
	if amount == 0 {
		return 0, carphoto.Errorf(carphoto.EInvalidParams, "amount must not be 0")
	}
	if amount > MaxCredits || amount < -MaxCredits {
		return 0, carphoto.Errorf(carphoto.EInvalidParams, "amount must be between %d and %d", -MaxCredits, MaxCredits)
	}
	if !validID(accountID) {
		return 0, errNoAccount(accountID)
	}
	// Not idempotent, so never run twice: a change not confirmed by a
	// replica is reported, to be checked before it is tried again.
	cmd, err := s.write(ctx, false, addScript, []string{acctKey(accountID), ledgerKey(accountID)},
		amount, requestID, unixMS(s.now()), s.cfg.LedgerMax, MaxCredits)
	if errors.Is(err, redisha.ErrNotReplicated) {
		return 0, carphoto.Wrap(fmt.Errorf("billing: add credits: %w", err), carphoto.EUnavailable,
			"the change was made but no replica confirmed it in time: read the balance before trying again")
	}
	if err != nil {
		return 0, storeErr("add credits", err)
	}
	v, err := cmd.Int64Slice()
	if err != nil {
		return 0, storeErr("add credits", err)
	}
	switch v[0] {
	case -1:
		return 0, errNoAccount(accountID)
	case 0:
		return v[1], carphoto.Errorf(carphoto.EInvalidParams, "taking %d credits would leave %d; the balance cannot go below 0", -amount, v[1]+amount)
	case -2:
		return v[1], carphoto.Errorf(carphoto.EInvalidParams, "adding %d credits to %d would pass the largest balance, %d", amount, v[1], MaxCredits)
	}
	return v[1], nil
}

// storeErr marks a Redis failure as the service's, not the client's.
func storeErr(op string, err error) error {
	return carphoto.Wrap(fmt.Errorf("billing: %s: %w", op, err), carphoto.EUnavailable, "the service's store is unavailable; retry shortly")
}

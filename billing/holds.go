package billing

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"carphoto"

	"github.com/redis/go-redis/v9"

	"carphoto/internal/redisha"
)

// Hold is credits reserved for one request. Pass it back to Capture or
// Release unchanged; the zero Hold is not a reservation.
type Hold struct {
	id        string
	accountID string
	requestID string
	op        string
	amount    int64
	ttl       time.Duration // how long it lives unsettled before the sweep returns it
}

// Amount returns the credits the hold reserved: what Capture charges.
func (h Hold) Amount() int64 { return h.amount }

// ID returns the hold's id (for logs).
func (h Hold) ID() string { return h.id }

// ErrHoldClosed is returned by Capture when the hold was released or had
// expired: nothing was charged, and the credits are back in the balance.
var ErrHoldClosed = errors.New("billing: hold already released or expired")

// holdScript reserves credits if the balance covers them:
// KEYS[1] cp:acct:{id}, KEYS[2] cp:hold:{id}:{hold}, KEYS[3] the slot's
// holds index, KEYS[4] cp:ledger:{id}; ARGV: amount, hold id, request id,
// op, now (ms), expires at (ms), ledger cap, account id, the client's own
// request id ("" for none: the ledger line then has none). It returns {1,
// balance left}, {0, balance} when the balance is short, {-1, 0} when the
// account is unknown. Run again for a hold it made, it changes nothing and
// returns {1, balance}: a hold whose answer was lost is tried again safely.
var holdScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1, 0} end
local bal = tonumber(redis.call('HGET', KEYS[1], 'credits') or '0')
if redis.call('EXISTS', KEYS[2]) == 1 then return {1, bal} end
local amount = tonumber(ARGV[1])
if bal < amount then return {0, bal} end
bal = redis.call('HINCRBY', KEYS[1], 'credits', -amount)
redis.call('HSET', KEYS[2], 'account', ARGV[8], 'request_id', ARGV[3], 'op', ARGV[4],
  'amount', amount, 'state', 'held', 'expires_at', ARGV[6])
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[8] .. ':' .. ARGV[2])
local entry = {'kind', 'hold', 'request_id', ARGV[3], 'op', ARGV[4], 'amount', amount,
  'delta', -amount, 'balance', bal, 'hold_id', ARGV[2], 'at', ARGV[5]}
if ARGV[9] ~= '' then
  table.insert(entry, 'client_request_id')
  table.insert(entry, ARGV[9])
end
redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[7], '*', unpack(entry))
return {1, bal}
`)

// closeLua moves a hold out of "held" exactly once. Capture, Release and
// the expiry sweep all go through it, so whichever runs first wins and the
// others see the new state. kind is capture, release or expire. The keys
// it builds share the account's slot with the holds index it is given.
// It returns {1, balance, state} when this call closed the hold,
// {0, balance, state} when it was already closed (balance 0 if unknown).
const closeLua = `
local function close(p, idx, acct, id, kind, now, cap)
  local hk = p .. 'hold:{' .. acct .. '}:' .. id
  local ak = p .. 'acct:{' .. acct .. '}'
  local h = redis.call('HMGET', hk, 'state', 'amount', 'request_id', 'op')
  if not h[1] then
    redis.call('ZREM', idx, acct .. ':' .. id)
    if kind == 'release' then
      -- A hold whose placing is still on its way (its caller gave up
      -- waiting for the answer) finds this mark and reserves nothing.
      redis.call('HSET', hk, 'state', 'released')
      redis.call('EXPIRE', hk, 86400)
    end
    return {0, 0, 'unknown'}
  end
  if h[1] ~= 'held' then
    return {0, tonumber(redis.call('HGET', ak, 'credits') or '0'), h[1]}
  end
  local amount = tonumber(h[2])
  local delta, state = 0, 'captured'
  if kind == 'release' then delta, state = amount, 'released' end
  if kind == 'expire' then delta, state = amount, 'expired' end
  local bal
  if delta ~= 0 then
    bal = redis.call('HINCRBY', ak, 'credits', delta)
  else
    bal = tonumber(redis.call('HGET', ak, 'credits') or '0')
  end
  redis.call('HSET', hk, 'state', state)
  redis.call('EXPIRE', hk, 86400) -- a repeated Capture or Release answers alike for a day
  redis.call('ZREM', idx, acct .. ':' .. id)
  redis.call('XADD', p .. 'ledger:{' .. acct .. '}', 'MAXLEN', '~', cap, '*',
    'kind', kind, 'request_id', h[3], 'op', h[4], 'amount', amount,
    'delta', delta, 'balance', bal, 'hold_id', id, 'at', now)
  return {1, bal, state}
end
`

// closeScript: KEYS[1] cp:hold:{id}:{hold}, KEYS[2] cp:acct:{id}, KEYS[3]
// the slot's holds index, KEYS[4] cp:ledger:{id}; ARGV prefix, account id,
// hold id, kind, now (ms), ledger cap.
var closeScript = redis.NewScript(closeLua + `
return close(ARGV[1], KEYS[3], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6])
`)

// reapScript expires up to ARGV[3] holds whose time has passed:
// KEYS[1] one slot's holds index (members account:hold); ARGV prefix, now
// (ms), batch size, ledger cap. It returns how many it looked at.
var reapScript = redis.NewScript(closeLua + `
local ids = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[2], 'LIMIT', 0, tonumber(ARGV[3]))
for _, m in ipairs(ids) do
  local acct, id = string.match(m, '^([^:]+):(.+)$')
  if acct then
    close(ARGV[1], KEYS[1], acct, id, 'expire', ARGV[2], ARGV[4])
  else
    redis.call('ZREM', KEYS[1], m)
  end
end
return #ids
`)

// Hold reserves the price of call for requestID, if the balance covers it.
// The check and the reservation are one atomic step, so concurrent calls
// can never spend more than the balance. A short balance is
// EInsufficientCredits. On a store error the hold may have been made all
// the same (the answer, not the script, was lost): the Hold returned then
// names it, for the caller to Release; on a refusal it is the zero Hold.
func (s *Service) Hold(ctx context.Context, accountID, requestID string, call Call) (Hold, error) {
	return s.HoldFor(ctx, accountID, requestID, call, s.Price(call), s.cfg.HoldTTL)
}

// HoldFor is Hold for a given amount that lives ttl before the sweep
// returns it: a video job's credits, held for as long as the job may run.
func (s *Service) HoldFor(ctx context.Context, accountID, requestID string, call Call, amount int64, ttl time.Duration) (Hold, error) {
	h := s.newHold(accountID, requestID, call.Name(), amount, ttl)
	if _, err := s.Place(ctx, h); err != nil {
		if carphoto.ErrorCode(err) != carphoto.EUnavailable {
			return Hold{}, err
		}
		return h, err
	}
	return h, nil
}

// NewHold names a hold of call's price for requestID without placing it:
// its id is chosen once, so that every try of Place, and the Release that
// settles it whatever happened, are about the same hold, even when a
// try's answer was lost after Redis had made it.
func (s *Service) NewHold(accountID, requestID string, call Call) Hold {
	return s.newHold(accountID, requestID, call.Name(), s.Price(call), s.cfg.HoldTTL)
}

func (s *Service) newHold(accountID, requestID, op string, amount int64, ttl time.Duration) Hold {
	return Hold{id: newID("hold"), accountID: accountID, requestID: requestID, op: op, amount: amount, ttl: ttl}
}

// Place reserves h's credits if the balance covers them and returns the
// balance left. Placing a hold again changes nothing and returns the
// balance; so does placing one already released (Release leaves a mark
// for a hold it did not find). A short balance is EInsufficientCredits.
func (s *Service) Place(ctx context.Context, h Hold) (remaining int64, err error) {
	if !validID(h.accountID) {
		return 0, fmt.Errorf("billing: hold: account %q does not exist", h.accountID)
	}
	if err := s.enlist(ctx, redisha.Slot(acctKey(h.accountID))); err != nil {
		return 0, storeErr("hold", err)
	}
	now := s.now()
	cmd, err := s.write(ctx, true, holdScript,
		[]string{acctKey(h.accountID), holdKey(h.accountID, h.id), holdsKey(h.accountID), ledgerKey(h.accountID)},
		h.amount, h.id, h.requestID, h.op, unixMS(now), unixMS(now.Add(h.ttl)), s.cfg.LedgerMax, h.accountID,
		clientRequestID(ctx),
	)
	if err != nil {
		return 0, storeErr("hold", err)
	}
	v, err := cmd.Int64Slice()
	if err != nil {
		return 0, storeErr("hold", err)
	}
	switch v[0] {
	case -1:
		return 0, fmt.Errorf("billing: hold: account %q does not exist", h.accountID)
	case 0:
		return 0, carphoto.Errorf(carphoto.EInsufficientCredits,
			"this call costs %d %s; the balance is %d", h.amount, plural(h.amount, "credit"), v[1])
	}
	return v[1], nil
}

// Capture charges the hold and returns the balance left. It charges at most
// once: capturing again returns the balance and charges nothing. If the hold
// was released or had expired first, it returns ErrHoldClosed and nothing is
// charged (the work was free).
func (s *Service) Capture(ctx context.Context, h Hold) (remaining int64, err error) {
	if h.id == "" {
		return 0, ErrHoldClosed
	}
	closed, bal, state, err := s.close(ctx, h.accountID, h.id, KindCapture)
	if err != nil {
		return 0, err
	}
	if closed || state == "captured" {
		return bal, nil
	}
	return 0, ErrHoldClosed
}

// Release returns the held credits to the balance. It does nothing when the
// hold was already captured, released or expired, and for the zero Hold, so
// it is safe to defer after every Hold.
func (s *Service) Release(ctx context.Context, h Hold) error {
	if h.id == "" {
		return nil
	}
	_, _, _, err := s.close(ctx, h.accountID, h.id, KindRelease)
	return err
}

// CaptureID and ReleaseID are Capture and Release for a hold known by its
// account and id (Hold.ID), as a worker knows a video job's.
func (s *Service) CaptureID(ctx context.Context, accountID, id string) (remaining int64, err error) {
	return s.Capture(ctx, Hold{accountID: accountID, id: id})
}

func (s *Service) ReleaseID(ctx context.Context, accountID, id string) error {
	return s.Release(ctx, Hold{accountID: accountID, id: id})
}

func (s *Service) close(ctx context.Context, accountID, holdID, kind string) (closed bool, balance int64, state string, err error) {
	if !validID(accountID) || !validID(holdID) {
		return false, 0, "unknown", nil
	}
	cmd, err := s.write(ctx, true, closeScript,
		[]string{holdKey(accountID, holdID), acctKey(accountID), holdsKey(accountID), ledgerKey(accountID)},
		prefix, accountID, holdID, kind, unixMS(s.now()), s.cfg.LedgerMax)
	if err != nil {
		return false, 0, "", storeErr(kind+" hold", err)
	}
	v, err := cmd.Slice()
	if err != nil {
		return false, 0, "", storeErr(kind+" hold", err)
	}
	n, _ := v[0].(int64)
	bal, _ := v[1].(int64)
	state, _ = v[2].(string)
	return n == 1, bal, state, nil
}

// reapBatch bounds one script run, so a backlog never blocks Redis long.
const reapBatch = 100

// reap returns every hold past its expiry to its balance and reports how
// many it closed or cleared. Holds are indexed per hash slot (an account's
// index shares its slot, so the hold script writes both), and the slots
// that hold any are listed in cp:holdslots (enlist): a pipeline asks each
// listed slot's index for one hold past due, and only those are swept. A
// sweep's cost follows the slots in use, not the holds ever placed. Once
// every fullScanEvery, the sweep whose turn it is asks all 16 384 slots
// instead, so a hold placed by a process that did not list its slot (a
// release before the list, a write lost in a failover) is still returned.
func (s *Service) reap(ctx context.Context) (int, error) {
	now := s.now()
	slots := allSlots()
	if full, _ := s.rdb.SetNX(ctx, fullScanTurn, 1, fullScanEvery).Result(); !full {
		var err error
		if slots, err = s.holdSlots(ctx); err != nil {
			return 0, storeErr("expire holds", err)
		}
	}
	total := 0
	for len(slots) > 0 {
		batch := slots[:min(len(slots), reapPipeline)]
		slots = slots[len(batch):]
		n, err := s.reapSlots(ctx, batch, now)
		total += n
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// reapPipeline bounds the slots one pipeline asks about, so that a full
// scan never holds a Redis connection past its read timeout.
const reapPipeline = 1024

// reapSlots sweeps the slots given: those with a hold past due.
func (s *Service) reapSlots(ctx context.Context, slots []holdSlot, now time.Time) (int, error) {
	due := make([]*redis.StringSliceCmd, len(slots))
	open := make([]*redis.IntCmd, len(slots))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, slot := range slots {
			due[i] = p.ZRangeByScore(ctx, slotHoldsKey(slot.n), &redis.ZRangeBy{Min: "-inf", Max: strconv.FormatInt(unixMS(now), 10), Count: 1})
			open[i] = p.ZCard(ctx, slotHoldsKey(slot.n))
		}
		return nil
	})
	if err != nil {
		return 0, storeErr("expire holds", err)
	}
	total := 0
	for i, slot := range slots {
		for len(due[i].Val()) > 0 {
			c, err := s.durable.Durable(ctx, s.rdb, reapScript, []string{slotHoldsKey(slot.n)},
				prefix, unixMS(now), reapBatch, s.cfg.LedgerMax)
			if err != nil {
				return total, storeErr("expire holds", err)
			}
			n, _ := c.Int()
			total += n
			if n < reapBatch {
				break
			}
		}
		s.settleSlot(ctx, slot, open[i].Val(), now)
	}
	return total, nil
}

// holdSlot is a slot listed in cp:holdslots, with when a hold was last
// placed in it (ms).
type holdSlot struct {
	n    int
	used int64
}

// holdSlots returns the slots cp:holdslots lists.
func (s *Service) holdSlots(ctx context.Context) ([]holdSlot, error) {
	zs, err := s.rdb.ZRangeWithScores(ctx, holdSlotsKey, 0, -1).Result()
	if err != nil {
		return nil, err
	}
	slots := make([]holdSlot, 0, len(zs))
	for _, z := range zs {
		m, _ := z.Member.(string)
		n, err := strconv.Atoi(m)
		if err != nil || n < 0 || n >= redisha.Slots {
			continue
		}
		slots = append(slots, holdSlot{n: n, used: int64(z.Score)})
	}
	return slots, nil
}

// allSlots is every slot, for the full scan: a slot found holding holds
// is listed again (settleSlot), one found empty is left as it is.
func allSlots() []holdSlot {
	slots := make([]holdSlot, redisha.Slots)
	for i := range slots {
		slots[i] = holdSlot{n: i, used: -1}
	}
	return slots
}

// settleSlot keeps the list in step with a slot the sweep found holding
// open holds before it swept: one missing from the list (found by the
// full scan) is listed; a listed one whose index was empty and in which no
// hold was placed for slotIdle leaves the list, unless a hold was placed
// in it since the sweep read it (unlistScript compares the time).
func (s *Service) settleSlot(ctx context.Context, slot holdSlot, open int64, now time.Time) {
	switch {
	case open > 0 && slot.used < 0:
		s.rdb.ZAddNX(ctx, holdSlotsKey, redis.Z{Score: float64(unixMS(now)), Member: strconv.Itoa(slot.n)})
	case open == 0 && slot.used >= 0 && slot.used < unixMS(now.Add(-slotIdle)):
		unlistScript.Run(ctx, s.rdb, []string{holdSlotsKey}, strconv.Itoa(slot.n), slot.used)
	}
}

// unlistScript removes ARGV[1] from the list KEYS[1] if its score is still
// ARGV[2]: a hold placed since re-listed it, and it stays.
var unlistScript = redis.NewScript(`
local used = redis.call('ZSCORE', KEYS[1], ARGV[1])
if used and tonumber(used) == tonumber(ARGV[2]) then redis.call('ZREM', KEYS[1], ARGV[1]) end
return 0
`)

// The list of slots with holds. A process lists a slot before it places a
// hold there (enlist), at most every enlistEvery per slot; the sweep drops
// a slot from it once its index is empty and no hold was placed there for
// slotIdle, which is longer, so a slot this process listed moments ago is
// never dropped while it still counts on it.
const (
	holdSlotsKey  = prefix + "holdslots"
	fullScanTurn  = prefix + "holdscan"
	fullScanEvery = time.Hour
	enlistEvery   = 10 * time.Minute
	slotIdle      = time.Hour
)

// enlist lists slot in cp:holdslots (scored by now), unless this process
// did so within enlistEvery.
func (s *Service) enlist(ctx context.Context, slot int) error {
	now := s.now()
	if last, ok := s.enlisted.Load(slot); ok && now.Sub(last.(time.Time)) < enlistEvery {
		return nil
	}
	err := rideThrough(ctx, func(ctx context.Context) error {
		return s.rdb.ZAddArgs(ctx, holdSlotsKey, redis.ZAddArgs{GT: true,
			Members: []redis.Z{{Score: float64(unixMS(now)), Member: strconv.Itoa(slot)}}}).Err()
	})
	if err != nil {
		return err
	}
	s.enlisted.Store(slot, now)
	return nil
}

// sweepTurn is taken (SET NX) by the web process that sweeps, for half a
// ReapInterval: a sweep asks every one of the 16 384 slots' indexes, so
// the fleet sweeps about twice per interval, not once per process.
const sweepTurn = prefix + "sweep"

// Run returns expired holds to their balances every ReapInterval until ctx
// is done, then returns nil. Every web process runs it, taking turns: holds
// left by a process that died come back within HoldTTL + ReapInterval, and
// processes sweeping at once cannot return a hold twice.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.ReapInterval)
	defer t.Stop()
	for {
		// Not this process's turn: another swept moments ago (or Redis is
		// out of reach, and the next tick tries again).
		if turn, _ := s.rdb.SetNX(ctx, sweepTurn, 1, s.cfg.ReapInterval/2).Result(); turn {
			if n, err := s.reap(ctx); err != nil && ctx.Err() == nil {
				s.cfg.Log.Error().Err(err).Msg("billing: expire holds")
			} else if n > 0 {
				s.cfg.Log.Info().Int("holds", n).Msg("billing: returned expired holds to their balances")
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// OpenHolds counts the holds not yet captured, released or expired, over
// the indexes of the slots listed in cp:holdslots: for tests and operators
// checking that no credits stay held.
func (s *Service) OpenHolds(ctx context.Context) (int64, error) {
	var n int64
	err := rideThrough(ctx, func(ctx context.Context) error {
		slots, err := s.holdSlots(ctx)
		if err != nil {
			return err
		}
		cards := make([]*redis.IntCmd, len(slots))
		_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, slot := range slots {
				cards[i] = p.ZCard(ctx, slotHoldsKey(slot.n))
			}
			return nil
		})
		n = 0
		for _, c := range cards {
			n += c.Val()
		}
		return err
	})
	if err != nil {
		return 0, storeErr("count holds", err)
	}
	return n, nil
}

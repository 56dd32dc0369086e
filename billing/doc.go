// Package billing is the money and access side of carphoto: accounts, API
// keys, credits (hold, capture, release), the per-account ledger, per-key
// rate limits and the Assets library of saved designs and backdrops.
//
// Everything lives in one Redis or one Redis Cluster, under the prefix
// "cp:". Every change that must be atomic is one Lua script on the keys of
// one account (or one API key, or one slot's hold index), all in one hash
// slot, so several web processes (and the companion app) can work on the
// same balance at once on either. The layout is a contract with the
// companion app and the admin tools; docs/billing.md is its public
// description. Keep the two in step. The braces below are literal: they
// are Redis Cluster hash tags.
//
//	cp:acct:{<account_id>}            hash   name, credits, key_hash, created_at
//	cp:key:<sha256(api_key)>          string account_id of the key's account (an index)
//	cp:hold:{<account_id>}:<hold_id>  hash   account, request_id, op, amount, state, expires_at
//	cp:holds:{<slot tag>}             zset   <account_id>:<hold_id> of one slot's open holds by expires_at
//	cp:holdslots                      zset   slot numbers whose cp:holds index may hold holds, by the last hold placed (Unix ms)
//	cp:holdscan                       string the full scan's turn (SET NX, an hour): every slot's index, not only the listed
//	cp:ledger:{<account_id>}          stream kind, request_id, op, amount, delta, balance, hold_id, at[, client_request_id]
//	cp:assets:{<account_id>}          zset   asset_id scored by created_at (Unix ms)
//	cp:asset:{<account_id>}:<asset>   hash   account, name, content_type, bytes, width, height, created_at, data
//	rate:cp:<key_id>                  string the GCRA state of redis_rate for one API key
//	rate:cp:admin                     string the same for the admin API (AllowAdmin)
//	cp:inflight:{<key_id>}            zset   request_id scored by expires_at (Unix ms): photo requests running
//	cp:inqueue:{<key_id>}             zset   request_id scored by arrival (cp:inseq:{<key_id>}): waiting for a slot
//	cp:inlease:{<key_id>}             zset   request_id scored by its ticket's lease end (Unix ms)
//	cp:inseq:{<key_id>}               string the arrival counter of the key's queue
//	cp:inwake                         pubsub key_id, published when one of its slots frees
//	cp:layout                         string "2" once MigrateLayout moved the keys of layout 1
//	cp:sweep                          string the expiry sweep's turn (SET NX, half a ReapInterval)
//
// credits is the balance the client can spend right now: a hold moves its
// amount out of credits at once, a capture keeps it out, a release or expiry
// puts it back. The companion app reads credits with HGET and tops up with
// HINCRBY cp:acct:{id} credits N; to spend, it must not let the balance go
// below zero (a Lua script that checks and decrements, like holdScript).
//
// Holds move held → captured, released or expired exactly once: the three
// transitions are one script (closeScript) that acts only on state "held".
// A web process that dies leaves its holds in its slot's cp:holds index;
// Run, in every web process, returns them once they are past expires_at.
//
// Money writes (hold, capture, release, expiry, credits, keys) are
// followed by WAIT on the same connection when Config.WaitReplicas is set
// (a Redis Cluster), so that an acknowledged change survives its master's
// failover; the idempotent ones are made again until confirmed.
package billing

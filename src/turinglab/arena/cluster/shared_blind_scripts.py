"""The Lua scripts of blind matching across processes (shared_blind.py), each atomic in Redis.

Keys, under the arena's namespace: `blind-at:<pid>` (the process a person waits on; while an
interrogator holds them as witness `taken:<taker>@<their process>`; `seated`), `blind-wait:<pid>`
("<mode>|<epoch s joined>", for a process adopting them), `blind:<mode>` (the offer set: entries
"pid|process", oldest first) and its counter `blind:<mode>:n`.
"""

from __future__ import annotations

from turinglab.arena.cluster.shared_rounds import BOOK_LUA

# KEYS[1] the person's `blind-at` key, KEYS[2] the mode's offer set, KEYS[3] the offer counter
# (oldest first), KEYS[4] their `blind-wait` key. ARGV[1] this process, ARGV[2] the entry,
# ARGV[3] "1" to offer them, ARGV[4] the keys' TTL, ARGV[5] "1" as they join, "2" when Redis
# lost their keys (restarted empty: set again unless another process has set them since),
# else they must still be waiting here, ARGV[6] "<mode>|<epoch s joined>" for `blind-wait`.
# 0: they are not (taken, or waiting on another process).
JOIN = """
if ARGV[5] == '1' then
  redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[4])
  redis.call('SET', KEYS[4], ARGV[6], 'EX', ARGV[4])
elseif ARGV[5] == '2' then
  redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[4])
  redis.call('SET', KEYS[4], ARGV[6], 'NX', 'EX', ARGV[4])
end
if ARGV[5] ~= '1' and redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[3] == '1' then
  redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[2])
end
return 1
"""

# KEYS[1] the person's `blind-at` key, KEYS[2] the mode's offer set. ARGV[1] this process,
# ARGV[2] the entry, ARGV[3] "1" when this process lets go of them (seated with an AI, timed
# out, gone), ARGV[4] "1" when they left (a held witness is let go too: their interrogator
# meets someone else). 'free': withdrawn, still waiting here; 'left': they were held, and are
# let go; 'gone': taken by a process, or waiting on another. An entry dropped as a ghost (its
# process was silent past its TTL, then came back) is free: its person must not be left
# waiting for nobody.
WITHDRAW = """
redis.call('ZREM', KEYS[2], ARGV[2])
local at = redis.call('GET', KEYS[1])
if at ~= ARGV[1] then
  if ARGV[4] == '1' and at and string.match(at, '^taken:[^@]*@(.*)$') == ARGV[1] then
    redis.call('DEL', KEYS[1])
    return 'left'
  end
  return 'gone'
end
if ARGV[3] == '1' then redis.call('DEL', KEYS[1]) end
return 'free'
"""

# KEYS[1] the person's `blind-at` key, KEYS[2] their `blind-wait` key, KEYS[3] their game
# route (`player:<pid>`, cluster.py). ARGV[1] this process, ARGV[2] the heartbeat key prefix,
# ARGV[3] the key's TTL. {'here', wait}: they wait on this process (given back to it by an
# interrogator who left); when they wait on a process whose heartbeat has gone, or were taken
# by one that died before it seated them, they wait here from now on: {'adopted',
# "<mode>|<epoch s joined>"}; {'elsewhere', marker} while that process lives, or while this
# one holds them (it seats them, or its interrogator leaves and gives them back: then 'here'
# — answered 'none', they were waited for by no process once given back); {'none', ''} when
# they wait nowhere else.
ADOPT = """
local at = redis.call('GET', KEYS[1])
if not at or at == 'seated' then return {'none', ''} end
if at == ARGV[1] then return {'here', redis.call('GET', KEYS[2]) or ''} end
local proc = string.match(at, '^taken:([^@]*)') or at
if proc == ARGV[1] then return {'elsewhere', at} end
if redis.call('EXISTS', ARGV[2] .. proc) == 1 then return {'elsewhere', at} end
if proc ~= at and redis.call('EXISTS', KEYS[3]) == 1 then  -- seated before it died
  redis.call('DEL', KEYS[1])
  return {'none', ''}
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[3])
return {'adopted', redis.call('GET', KEYS[2]) or ''}
"""

# Two-party, within the interrogator's window: hold the witness the rule chose
# (blind_rule.choose_witness), if they are still there. KEYS[1] the caller's `blind-at`,
# KEYS[2] the offer set, KEYS[3] the candidate's `blind-at`, KEYS[4] the caller's met-set.
# ARGV[1] this process, ARGV[2] the caller's entry, ARGV[3] the candidate's entry, ARGV[4] the
# candidate's pid, ARGV[5] the heartbeat key prefix, ARGV[6] the TTL. 'held'; 'stale': the
# candidate is not free (any more); 'gone': the caller was taken, or waits elsewhere now.
CLAIM = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  redis.call('ZREM', KEYS[2], ARGV[2])
  return 'gone'
end
local proc = string.match(ARGV[3], '|(.*)$')
if redis.call('GET', KEYS[3]) ~= proc or redis.call('EXISTS', ARGV[5] .. proc) == 0 then
  redis.call('ZREM', KEYS[2], ARGV[3])  -- taken, waiting elsewhere, or its process died
  return 'stale'
end
if not redis.call('ZSCORE', KEYS[2], ARGV[3])
   or redis.call('SISMEMBER', KEYS[4], ARGV[4]) == 1 then
  return 'stale'
end
redis.call('ZREM', KEYS[2], ARGV[3], ARGV[2])
redis.call('SET', KEYS[3], 'taken:' .. ARGV[1] .. '@' .. proc, 'EX', ARGV[6])
return 'held'
"""

# Two-party, at the interrogator's due time: the witness they hold is still theirs; count the
# round for both. KEYS[1] the caller's `blind-at`, KEYS[2] the witness's, KEYS[3] the caller's book,
# KEYS[4] the witness's. ARGV[1] this process, ARGV[2] "taken:<this process>@", ARGV[3] the
# met-set prefix, ARGV[4] the caller's pid, ARGV[5] the witness's, ARGV[6] the met-set TTL,
# ARGV[7] the book TTL. {'paired', ci, cw, wi, ww}; 'lost': the witness left (or joined again);
# 'gone': the caller waits here no more.
CONFIRM = (
    BOOK_LUA
    + """
local w = redis.call('GET', KEYS[2]) or ''
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return {'gone', 0, 0, 0, 0} end
if string.sub(w, 1, string.len(ARGV[2])) ~= ARGV[2] then return {'lost', 0, 0, 0, 0} end
local ci, cw = counts(KEYS[3])
local wi, ww = counts(KEYS[4])
ci, ww = ci + 1, ww + 1
record_pair(KEYS[3], ci, cw, KEYS[4], wi, ww, ARGV[3] .. ARGV[4], ARGV[3] .. ARGV[5],
            ARGV[4], ARGV[5], ARGV[6], ARGV[7])
-- Both marked taken until seated (SEATED): if this process dies first, they are adopted.
redis.call('SET', KEYS[1], ARGV[2] .. ARGV[1], 'EX', ARGV[6])
return {'paired', ci, cw, wi, ww}
"""
)

# An interrogator who holds a witness and leaves gives them back to their own process, offered
# again. KEYS[1] the witness's `blind-at`, KEYS[2] the offer set, KEYS[3] its counter.
# ARGV[1] "taken:<this process>@", ARGV[2] the TTL, ARGV[3] the witness's pid.
RELEASE = """
local w = redis.call('GET', KEYS[1]) or ''
if string.sub(w, 1, string.len(ARGV[1])) ~= ARGV[1] then return 0 end
local owner = string.sub(w, string.len(ARGV[1]) + 1)
redis.call('SET', KEYS[1], owner, 'EX', ARGV[2])
redis.call('ZADD', KEYS[2], redis.call('INCR', KEYS[3]), ARGV[3] .. '|' .. owner)
return 1
"""

# A person held as a witness, no longer waiting in this process's list, who leaves: let go.
# KEYS[1] their `blind-at`; ARGV[1] this process.
LET_GO = """
local at = redis.call('GET', KEYS[1])
if at and string.match(at, '^taken:[^@]*@(.*)$') == ARGV[1] then
  redis.call('DEL', KEYS[1])
  return 1
end
return 0
"""

# Three-party, at the interrogator's due time: take the oldest offered person who has not met
# them and whose quota allows witnessing, count the round for both and mark both taken.
# KEYS[1] the mode's offer set, KEYS[2] the caller's book, KEYS[3] the caller's `blind-at` key,
# KEYS[4] the offer counter. ARGV[1] the caller's entry, ARGV[2] their pid, ARGV[3] the book key
# prefix, ARGV[4] the met-set prefix, ARGV[5] interrogator quota, ARGV[6] witness quota,
# ARGV[7] met-set TTL, ARGV[8] book TTL, ARGV[9] the heartbeat key prefix, ARGV[10] "1" when
# the caller is offered too, ARGV[11] the `blind-at` prefix, ARGV[12] this process.
# An entry is taken only while its person's `blind-at` names its process: one who joined again
# elsewhere, or was taken, is not there any more.
# Returns {outcome, partner entry, caller i, caller w, partner i, partner w}.
TAKE = (
    BOOK_LUA
    + """
if redis.call('GET', KEYS[3]) ~= ARGV[12] then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return {'gone', '', 0, 0, 0, 0}
end
local qi, qw = tonumber(ARGV[5]), tonumber(ARGV[6])
local ci, cw = counts(KEYS[2])
local met = ARGV[4] .. ARGV[2]
for _, e in ipairs(ci < qi and redis.call('ZRANGE', KEYS[1], 0, -1) or {}) do
  local other = string.match(e, '^([^|]+)')
  local proc = string.match(e, '|(.*)$')
  if redis.call('EXISTS', ARGV[9] .. proc) == 0 then
    redis.call('ZREM', KEYS[1], e)  -- its process died, and the person's socket with it
  elseif redis.call('GET', ARGV[11] .. other) ~= proc then
    redis.call('ZREM', KEYS[1], e)  -- taken, or waiting elsewhere now
  elseif other ~= ARGV[2] and redis.call('SISMEMBER', met, other) == 0 then
    local book = ARGV[3] .. other
    local oi, ow = counts(book)
    if ow < qw then
      redis.call('ZREM', KEYS[1], e, ARGV[1])
      -- Taken, not yet seated: marked, so that if this process dies before it seats them
      -- the one they reconnect to adopts them (ADOPT) instead of leaving them untold.
      local taken = 'taken:' .. ARGV[12] .. '@'
      redis.call('SET', ARGV[11] .. other, taken .. proc, 'EX', ARGV[7])
      redis.call('SET', KEYS[3], taken .. ARGV[12], 'EX', ARGV[7])
      ci, ow = ci + 1, ow + 1
      record_pair(KEYS[2], ci, cw, book, oi, ow, met, ARGV[4] .. other, ARGV[2], other,
                  ARGV[7], ARGV[8])
      return {'paired', e, ci, cw, oi, ow}
    end
  end
end
if ARGV[10] == '1' then  -- still offered (again, if it was dropped as a ghost meanwhile)
  redis.call('ZADD', KEYS[1], 'NX', redis.call('INCR', KEYS[4]), ARGV[1])
end
return {'none', '', ci, cw, 0, 0}
"""
)

# KEYS: the `blind-at` keys of people this process took (TAKE, CONFIRM), now seated. ARGV[1] this
# process, ARGV[2] the keys' TTL. Marked `seated` (until they join again), not deleted: a
# process that still lists them as waiting and notes its waiting people again after Redis
# restarted empty (JOIN, "2") must not offer them again.
SEATED = """
for _, key in ipairs(KEYS) do
  local at = redis.call('GET', key) or ''
  if string.match(at, '^taken:([^@]*)') == ARGV[1] then
    redis.call('SET', key, 'seated', 'EX', ARGV[2])
  end
end
"""

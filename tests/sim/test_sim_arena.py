"""The arena simulator (sim/): real arena processes on a virtual clock, one seed per schedule.

* a seed replays exactly (the same trace, store and digest), in this interpreter and another;
* seeded schedules with process crashes keep every promise the simulator checks;
* the checks can fail: with a bug put into the arena's store bridge (a message row dropped
  after its sender was shown it as sent), the same schedules report the lost message (the
  store refuses the game's next message out of sequence, so no hole is ever stored);
* `turinglab sim arena --json` prints the schedules and the violations found.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import time
from concurrent.futures import Future

import pytest

from turinglab.arena.core import store_bridge
from turinglab.sim import fake_redis
from turinglab.sim.run import schedule

pytestmark = pytest.mark.slow

CRASHES = frozenset({"crash"})


def test_a_seed_replays_exactly() -> None:
    logger = logging.getLogger("turinglab")
    before = (logger.level, logger.propagate, list(logger.handlers), time.time)
    # another seed between the two: what ran before (its garbage, its sockets, its timers)
    # must not change a schedule (seeds 5 and 7 once did: timers tied at one instant ran in
    # heap order, subscribers were served in address order)
    first, _, again = schedule(1, 2), schedule(2, 2), schedule(1, 2)
    # and leaves the process as it found it (other tests in this worker read its logs, clocks)
    assert (logger.level, logger.propagate, list(logger.handlers), time.time) == before
    assert first["plan"]["crash"] is not None  # a schedule with a takeover in it
    assert first["plan"]["redis_restart"] is not None  # and Redis coming back empty
    assert first["games"] >= 1 and first["trace"] == again["trace"]
    assert first["digest"] == again["digest"]


# 57 and 98: people arrive after the crash, their first process dead (they open the other's).
def test_the_fake_redis_short_way_changes_no_schedule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Commands the short way (sim/fake_redis.py) play exactly as the libraries' whole way."""
    if not fake_redis.SHORT_WAY:
        pytest.skip("not the redis-py and fakeredis versions the short way was checked on")
    short = schedule(1, 2)
    monkeypatch.setattr(fake_redis, "SHORT_WAY", False)
    whole = schedule(1, 2)
    assert short["plan"]["redis_restart"] is not None and short["plan"]["crash"] is not None
    assert (short["digest"], short["steps"]) == (whole["digest"], whole["steps"])


def test_seeded_schedules_with_crashes_keep_every_promise() -> None:
    results = [schedule(seed, 2, CRASHES) for seed in [*range(1, 11), 57, 98]]
    assert sum(r["games"] for r in results) >= 20
    assert sum(r["plan"]["crash"] is not None for r in results) >= 5
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []


def test_a_message_lost_after_it_was_shown_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    written = store_bridge.GameRecorder._write
    count = [0]

    def drop_every_fourth(self: store_bridge.GameRecorder, message: object) -> None:
        count[0] += 1
        if count[0] % 4 == 0:  # "committed" without a write: shown, and never stored
            done: Future[None] = Future()
            done.set_result(None)
            self._report(done, message.seq)  # type: ignore[attr-defined]
            return
        written(self, message)  # type: ignore[arg-type]

    monkeypatch.setattr(store_bridge.GameRecorder, "_write", drop_every_fourth)
    found = {
        v["invariant"] for seed in range(1, 4) for v in schedule(seed, 2, CRASHES)["violations"]
    }
    assert "acknowledged-message-lost" in found and "seq-broken" not in found


def test_the_command_prints_schedules_and_violations_as_json() -> None:
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "turinglab",
            "sim",
            "arena",
            "--seeds",
            "2:4",
            "--faults",
            "crash",
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["schedules"] == 2 and report["violations"] == [] and report["games"] >= 2


def test_bad_seeds_get_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", "sim", "arena", "--seeds", "5:2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and "--seeds 5:2: B must be greater than A" in done.stderr


# Schedules where Redis restarts empty that once broke a promise: a listener that slept through
# the restart (the simulator's socket stayed open: 5, 12, 13, 15, 25, 28), a join refused while
# Redis was away and never pressed again (the simulated person: 1, 2, 24, 31, 35), a person back
# from a game that ended on a process killed just before the restart, asked 30 s instead of 3 s
# (the arena's catch-up: 38), a process killed seconds before the restart never listed again,
# so never taken over, its game never ended (the arena's heartbeat: 82, 83), a person queued on
# that process, watched from another, whose queue entry Redis lost (queue_adopt: 107, 160).
REDIS_RESTART_SEEDS = (1, 2, 5, 12, 13, 15, 24, 25, 28, 31, 35, 38, 82, 83, 107, 160)


def test_seeded_schedules_with_redis_restarts_keep_every_promise() -> None:
    results = [schedule(seed, 2) for seed in REDIS_RESTART_SEEDS]
    assert all(r["plan"]["redis_restart"] is not None for r in results)
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []


def test_a_person_arriving_after_a_server_died_starts_on_another() -> None:
    """Seed 98: a process killed at 5 s, before some people arrive; their consent goes to a
    living server, as the load balancer in front would send it (it failed the person)."""
    result = schedule(98, 2)
    assert result["plan"]["crash"][1] < 10.0 and result["plan"]["redis_restart"] is None
    assert result["violations"] == []


# A process killed seconds before Redis restarted empty is found dead only a whole TTL after
# Redis is back (cluster_takeover.py): its people waited ~20 s with no frame for their game
# (260, 278, 318, 332: now told to wait after 5 s). And with or without a restart, a partner
# who left from the survivor while the dead process played their game was counted gone only
# 40 s after the takeover, as if their page might still be on a paused owner (157, 321, 671,
# 785, 988: the survivor knows when their last socket there closed). Rechecked on c152312 +
# the holders' re-check, each fix taken out: all still break but 321, 785 and 988 (their
# schedules moved; kept as schedules that must stay clean, no longer as proof of the fix).
TAKEOVER_WAIT_SEEDS = (157, 260, 278, 318, 321, 332, 671, 785, 988)


def test_people_waiting_on_a_dead_owner_are_told_and_departures_counted_from_then() -> None:
    results = [schedule(seed, 2) for seed in TAKEOVER_WAIT_SEEDS]
    assert all(r["plan"]["crash"] is not None for r in results)
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []


# A flagged game's round given back in Redis on a pooled connection that a Redis restart had
# reset long before: the give-back failed, Redis still counted the round, and the person's
# next Leave mirrored that count and answered with the lobby as "rounds-done", one round more
# than the store held (230, 801: the join after it was checked against the store, the leave
# was not). Found on 230 and 801; since the heartbeat's cadence changed the schedules, 488 is
# the seed that breaks without the fix (rechecked then, as were TAKEOVER_WAIT_SEEDS: a seed
# shows a bug only on the schedules of the code it was found on). Since the `listening:` key
# moved every schedule, 488 no longer breaks without the fix, nor does any of 1-1000 (rechecked
# with the Leave's recount taken out): kept as a schedule that must stay clean, not as proof.
LEAVE_RECOUNT_SEEDS = (488,)


def test_a_leave_shows_rounds_done_only_as_the_store_counts_them() -> None:
    results = [schedule(seed, 2) for seed in LEAVE_RECOUNT_SEEDS]
    assert all(r["plan"]["redis_restart"] is not None for r in results)
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []


# A partner whose socket was on the killed owner and who left as it died was counted gone only
# from the estimate for a stopped owner, whose pages may need ~50 s to come back: told ~50 s
# after the departure (161, 958). Redis dropped the killed process's subscriptions with its
# sockets; a stopped one's stay: the survivor now asks (PUBSUB NUMSUB) and counts from when
# pages of a killed one are back.
KILLED_OWNER_SEEDS = (161, 958)


def test_a_departure_from_a_killed_owner_is_counted_from_when_its_pages_are_back() -> None:
    results = [schedule(seed, 2) for seed in KILLED_OWNER_SEEDS]
    assert all(r["plan"]["crash"] is not None for r in results)
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []


def test_an_input_sent_to_an_owner_killed_moments_before_is_told_to_wait() -> None:
    """Seed 999: a message sent on to its game's owner just after the owner was killed, the
    page heard nothing for 17.9 s, until the takeover's notice: now told to wait after 5 s."""
    result = schedule(999, 2)
    assert result["plan"]["crash"] is not None
    assert result["violations"] == []


def test_a_departure_told_while_the_owner_was_away_from_redis_is_told_again() -> None:
    """Three processes, seed 72: a witness left 1.5 s after Redis came back empty, from the
    process holding their socket; its `gone` was published while the game's owner had not
    subscribed again yet, so the owner counted them present until the talk's time was up
    (told 50.5 s after). Back on Redis, an owner now asks its holders again, and a holder
    tells again the departures it told lately (ClusterPresence._check_holders_again)."""
    result = schedule(72, 3)
    assert result["plan"]["redis_restart"] is not None
    assert result["violations"] == []


# People who close a page that broke mid-game (`give_up_p`, off in the default plan), three
# processes, crashes and Redis restarts:
# 83: an interrogator gave up on a third process while their game's owner was dead and Redis
#   had just come back empty (so the takeover could not tell killed from stopped): counted
#   gone only from the stopped owner's estimate, told 38.5 s after. That process now notes in
#   Redis when their last socket there closed (`left:<pid>`), for whoever takes the game over.
# 88: a witness gave up as the process holding their socket was killed; the owner counted them
#   gone only once it found that process dead (its TTL and HOLDER_GONE_S), told 28.4 s after.
#   Now counted from the death.
# 156, 294: someone gave up on the killed owner itself, Redis having come back empty seconds
#   before the kill, so the takeover took it for a stopped owner and waited for its pages (told
#   43 s after). A process now says in Redis that it has subscribed again (`listening:<name>`),
#   and then its subscriptions tell a killed one from a stopped one as before.
GIVE_UP_SEEDS = (83, 88, 156, 294)


def test_people_who_give_up_on_a_broken_page_are_told_of_in_time() -> None:
    results = [schedule(seed, 3, people={"give_up_p": 0.5}) for seed in GIVE_UP_SEEDS]
    assert all(r["plan"]["crash"] is not None and r["plan"]["give_up_p"] for r in results)
    assert all(any(line.startswith("  end: left") for line in r["trace"]) for r in results)
    assert [(r["seed"], r["violations"]) for r in results if r["violations"]] == []


def test_a_probability_out_of_range_gets_one_line() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "turinglab", "sim", "arena", "--seed", "1", "--give-up-p", "2"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode != 0 and "--give-up-p must be a probability" in done.stderr

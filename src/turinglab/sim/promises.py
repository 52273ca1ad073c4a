"""The arena's promises about people's games, checked on the store and what the pages saw
(sim/invariants.py runs them):

* a departure is told in time: when a person abandons a game, the other is told within the
  abandon grace + SLACK_S, or the game's talk ended within that time and it finished; when
  the game's owner died meanwhile, within SLACK_S of its takeover (the other page told its
  game is moving) if that is later: the new owner knows of the departure only from then;
* rounds are counted once: nobody's store holds more counted games in a role than the study
  gives that role, and the round book a person's final status showed equals the store's count;
* a stale owner writes nothing: every message and control-event row was written by the
  process that owned its game (store/fencing.py) in the transaction that wrote it;
* no frame before a game's reveal names a seat's kind or the AI (Tally.leaks).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

from turinglab.arena.core.abandon import ABANDONED
from turinglab.arena.core.rounds import RoundBook
from turinglab.bench.arena_tally import Tally
from turinglab.games.spec import FINISHED

SLACK_S = 15.0  # after the grace: a lobby tick, a takeover's heartbeat, the frames' way
FINAL = ("rounds-done", "no-match")  # statuses after which a person's book no longer moves
COUNTED = ("playing", "finished")  # a round (as store/arena_people.study_rounds counts them)
JUDGE_SEAT = "interrogator"  # the three-party game's interrogating seat


def departures_late(
    tally: Tally, ends: Mapping[str, tuple[str, float | None]], grace_s: float
) -> list[str]:
    """Games someone abandoned whose other person was told late, or never. `ends`: the
    arena's game id -> (status, finished_at) in the store. A game that still finished (a
    verdict, no flag) was not ended by the departure: the talk ended while the arena had not
    yet counted them gone, so it must have ended within the grace + slack of the departure
    (after that, the arena let the game go on, and count, without them)."""
    found = []
    limit = grace_s + SLACK_S
    for game, left in sorted(tally.left.items()):
        if tally.leavers[game] > 1:
            continue  # both left: nobody was there to be told
        status, ended = ends.get(game, ("not stored", None))
        told = tally.told.get(game)
        if status == FINISHED:
            talk = tally.talk_ends.get(game, 0.0) - left
            if talk > limit:
                found.append(f"{game}: finished, its talk going on {talk:.1f} s after a departure")
        elif told is not None:
            moved = tally.moved.get(game, 0.0)  # a takeover before it was told
            due = max(left + grace_s, moved if moved < told else 0.0)
            if told - due > SLACK_S:
                found.append(f"{game}: told {told - left:.1f} s after the departure ({status})")
        elif status == ABANDONED or ended is None or ended > left + grace_s:
            # not the race of a game ending by itself as one of its people left
            found.append(f"{game}: never told ({status})")
    return found


def rounds_miscounted(
    tally: Tally, seated: Iterable[tuple[str, str, str]], rounds: int
) -> tuple[list[str], list[str]]:
    """(people with more counted games in a role than the study gives it, people whose final
    round book differs from the store's count). `seated`: (participant, seat, game status)
    of every human seat in the study's games."""
    quota = RoundBook(rounds, random.Random(0)).quota
    counted: dict[str, Counter[str]] = {}
    for who, seat, status in seated:
        mine = counted.setdefault(who, Counter())
        if status in COUNTED:
            mine["interrogator" if seat == JUDGE_SEAT else "witness"] += 1
    over = [
        f"{who}: {dict(n)}, the study gives {quota}"
        for who, n in sorted(counted.items())
        if any(n[role] > quota[role] for role in quota)
    ]
    off = [
        f"{who}: book {played}/{total} ({state}), store {sum(counted.get(who, Counter()).values())}"
        for who, (played, total, state) in sorted(tally.books.items())
        if state in FINAL and played != sum(counted.get(who, Counter()).values())
    ]
    return over, off


def stale_writes(writes: Iterable[tuple[Any, ...]]) -> list[str]:
    """Rows written by a process that did not own their game (row_writers.py) when they were."""
    return [
        f"{table} {gid}#{key} by {proc} at {at:.1f} s, owner {owner} (epoch {epoch})"
        for proc, table, gid, key, owner, epoch, at in writes
        if owner is None or str(owner).partition("/")[0] != proc
    ]

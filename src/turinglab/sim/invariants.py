"""The arena's promises, checked after each schedule on what the store holds (plain SQL, as
bench/arena_audit.py reads it) and on what each simulated page saw (bench/arena_tally.py):

* every message shown to its sender as sent is stored, exactly once; each game's `seq` runs
  0, 1, 2, … without a hole;
* every game has ended, and one that did not finish says why (its flags);
* nobody is in two games at once; no game ends "no-verdict" (the people always give one);
* nobody waits more than 15 s for a frame owed to them (an input's answer, a reconnect), nor
  is left waiting without a game or a status past the lobby's limit;
* no page is shown a frame that does not belong where it is (the lobby mid-game, another
  game's snapshot), and no simulated page or person failed (that would be the simulator's bug);
* and sim/promises.py's: departures told in time, rounds counted once, nothing written by a
  stale owner, no seat's kind shown before the reveal.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import create_engine, text

from turinglab.bench.arena_tally import Tally
from turinglab.sim.promises import departures_late, rounds_miscounted, stale_writes

OWED_LIMIT_S = 15.0

SEQ_BROKEN = (
    "SELECT g.id, count(m.seq), min(m.seq), max(m.seq) FROM games g "
    "JOIN messages m ON m.game_id = g.id WHERE g.run_id = :r GROUP BY g.id "
    "HAVING count(m.seq) != max(m.seq) + 1 OR min(m.seq) != 0 "
    "OR count(DISTINCT m.seq) != count(m.seq)"
)
NO_REASON = (
    "SELECT id, status FROM games WHERE run_id = :r AND trial_id IS NOT NULL "
    "AND status NOT IN ('finished', 'playing') AND (flags IS NULL OR flags IN ('[]', 'null', ''))"
)

ENDS = (  # the arena's id of each game (store_bridge: setup.arena_game), and how it ended
    "SELECT json_extract(setup, '$.arena_game'), status, finished_at FROM games "
    "WHERE run_id = :r AND trial_id IS NOT NULL"
)
SEATED = (
    "SELECT s.participant, s.seat, g.status FROM seats s JOIN games g ON g.id = s.game_id "
    "WHERE g.run_id = :r AND g.trial_id IS NOT NULL AND s.kind = 'human' "
    "AND json_extract(g.setup, '$.solo') = 0"
)


@dataclass(frozen=True)
class Violation:
    invariant: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"invariant": self.invariant, "detail": self.detail}


def check(
    url: str,
    run_id: str,
    audit: dict[str, Any],
    tally: Tally,
    failures: list[str],
    *,
    writes: Iterable[tuple[Any, ...]] = (),
    grace_s: float = 12.0,
    rounds: int = 2,
) -> list[Violation]:
    found: list[Violation] = []

    def broken(name: str, when: bool, detail: Any) -> None:
        if when:
            found.append(Violation(name, str(detail)[:400]))

    broken(
        "acknowledged-message-lost",
        audit["acknowledged_lost_count"] > 0,
        audit["acknowledged_lost"],
    )
    broken("message-stored-twice", audit["stored_twice_count"] > 0, audit["stored_twice_count"])
    broken("seated-in-two-games-at-once", audit["seated_twice_count"] > 0, audit["seated_twice"])
    broken("game-never-ended", audit["not_ended"] > 0, audit["by_status"])
    broken(
        "verdict-lost", audit["finished_without_a_verdict"] > 0, audit["finished_without_a_verdict"]
    )
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            holes = conn.execute(text(SEQ_BROKEN), {"r": run_id}).all()
            silent = conn.execute(text(NO_REASON), {"r": run_id}).all()
            ends = {g: (status, at) for g, status, at in conn.execute(text(ENDS), {"r": run_id})}
            seated = [tuple(row) for row in conn.execute(text(SEATED), {"r": run_id})]
    finally:
        engine.dispose()
    broken("seq-broken", bool(holes), [tuple(h) for h in holes])
    broken("ended-without-a-reason", bool(silent), [tuple(s) for s in silent])
    owed_s, what, _, who = tally.longest_owed
    broken("waited-too-long-for-a-frame", owed_s > OWED_LIMIT_S, f"{who} {owed_s:.1f} s for {what}")
    broken("left-waiting", bool(tally.stuck), tally.stuck)
    broken("frame-out-of-place", bool(tally.odd_frames), tally.odd_frames[:3])
    broken(
        "person-failed", bool(failures) or bool(tally.failures), failures or dict(tally.failures)
    )
    faults = tally.counts.get("page faults (benchmark bugs)", 0)
    broken("page-failed", faults > 0, faults)
    late = departures_late(tally, ends, grace_s)
    broken("departure-told-late", bool(late), late)
    over, off = rounds_miscounted(tally, seated, rounds)
    broken("more-rounds-than-the-study", bool(over), over)
    broken("rounds-miscounted", bool(off), off)
    stale = stale_writes(writes)
    broken("stale-owner-wrote", bool(stale), stale[:3])
    broken("kind-shown-before-reveal", bool(tally.leaks), tally.leaks[:3])
    return found

"""After a benchmark run: what the store holds, read in plain SQL, checked against what people
were shown.

* every game of the run has ended, and how (status; the reason of every flagged or abandoned
  game, as its flags say);
* every message a person was shown as sent (acknowledged) is stored exactly once: an id the
  store lacks is lost, an id stored twice is duplicated;
* nobody was seated in two games at once (two games of theirs whose times overlap);
* how many games ended without a verdict: the benchmark's interrogators give one 3-12 s after
  the talk unless they left (then the game ends abandoned), so such a game lost it.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from turinglab.bench.arena_tally import parse_tag

# A person in two games of the run whose times overlap (a game still playing never ends).
# Only games of trials: a person's own row (consent, a survey of someone never seated) is
# not a game, and written late (the store down at their consent) it falls inside one.
SEATED_TWICE = (
    "SELECT s1.participant, g1.id, g2.id, g1.started_at, g2.started_at "
    "FROM seats s1 JOIN games g1 ON g1.id = s1.game_id "
    "JOIN seats s2 ON s2.participant = s1.participant AND s2.game_id > s1.game_id "
    "JOIN games g2 ON g2.id = s2.game_id "
    "WHERE g1.run_id = :r AND g2.run_id = :r AND s1.participant IS NOT NULL "
    "AND g1.trial_id IS NOT NULL AND g2.trial_id IS NOT NULL "
    "AND g2.started_at < COALESCE(g1.finished_at, 'Infinity') "
    "AND g1.started_at < COALESCE(g2.finished_at, 'Infinity') "
    "ORDER BY g1.id"
)


def audit_store(url: str, run_id: str, acked: list[str]) -> dict[str, Any]:
    from sqlalchemy import create_engine, text

    from turinglab.store.database import store_url

    engine = create_engine(store_url(url))
    try:
        with engine.connect() as conn:
            games = conn.execute(
                text("SELECT status, flags FROM games WHERE run_id = :r AND trial_id IS NOT NULL"),
                {"r": run_id},
            ).all()
            texts = conn.execute(
                text(
                    "SELECT m.text FROM messages m JOIN games g ON g.id = m.game_id "
                    "WHERE g.run_id = :r"
                ),
                {"r": run_id},
            ).scalars()
            stored = Counter(found[0] for t in texts if (found := parse_tag(t)) is not None)
            twice = conn.execute(text(SEATED_TWICE), {"r": run_id}).all()
            no_verdict = conn.execute(
                text(
                    "SELECT count(*) FROM outcomes o JOIN games g ON g.id = o.game_id "
                    "WHERE g.run_id = :r AND o.status = 'no-verdict'"
                ),
                {"r": run_id},
            ).scalar_one()
    finally:
        engine.dispose()
    reasons: Counter[str] = Counter()
    for status, flags in games:
        for flag in json.loads(flags) if isinstance(flags, str) else flags or []:
            reasons[f"{status}: {str(flag)[:100]}"] += 1
    shown = set(acked)
    return {
        "games": len(games),
        "by_status": dict(Counter(status for status, _ in games)),
        "not_ended": sum(1 for status, _ in games if status == "playing"),
        "ended_with_a_reason": dict(reasons),
        "finished_without_a_verdict": no_verdict,
        "person_messages_stored": sum(stored.values()),
        "acknowledged_messages": len(shown),
        "acknowledged_lost": sorted(shown - set(stored))[:20],
        "acknowledged_lost_count": len(shown - set(stored)),
        "stored_twice_count": sum(1 for n in stored.values() if n > 1),
        "seated_twice_count": len(twice),
        "seated_twice": [
            {"person": p, "games": [a, b], "started": [round(x, 1), round(y, 1)]}
            for p, a, b, x, y in twice[:20]
        ],
    }

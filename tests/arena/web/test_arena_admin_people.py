"""The study's participants and game counts as /admin reads them from the store (store/
arena_people.py), on SQLite and PostgreSQL: the newest first with a count of all; rounds as
the round book counts them (a game being played or finished cleanly; not practice, not a
flagged or abandoned game); recruitment ids and the survey from any of a person's rows."""

from __future__ import annotations

import itertools

from arena_fixtures import make_setup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, TrialSpec
from turinglab.store import arena_games
from turinglab.store.database import GameStart, SeatRecord, Store

_ids = itertools.count(1)


def _game(kept: ArenaStore, people: dict[str, str], *, solo: bool = False) -> int:
    """A game with these people seated (seat -> participant id) and an AI witness."""
    n = next(_ids)
    seats = {**dict.fromkeys(people, "human"), "witness": "eliza"}
    spec = TrialSpec(n, f"t{n}", "two-party-test", n, seats)
    start = GameStart(
        kept.run_id,
        None,
        1,
        "two-party-test",
        1000.0 + n,
        [SeatRecord(s, "human", "human", pid) for s, pid in people.items()]
        + [SeatRecord("witness", "eliza", "agent")],
        None,
        "w1",
        {"arena_game": f"g-{n}", "mode": "two-party", "solo": solo, "trial": spec.to_json()},
    )
    with kept.store.writing() as conn:
        (gid,) = arena_games.start_games(kept.store, conn, [(start, spec)])
    return gid


def _end(kept: ArenaStore, gid: int, result: GameResult) -> None:
    with kept.store.writing() as conn:
        arena_games.end_game(kept.store, conn, gid, result, 2000.0, worker="w1")


def test_people_and_counts_from_the_store(store_location: str) -> None:
    kept = ArenaStore(Store(store_location), make_setup())
    try:
        with kept.store.writing() as conn:
            for pid, ids in (("p-a", {"PROLIFIC_PID": "A"}), ("p-b", {}), ("p-c", {"pid": "C"})):
                arena_games.save_consent(kept.store, conn, kept.run_id, pid, ids, "w1")
        done = _game(kept, {"interrogator": "p-a"})
        _end(kept, done, GameResult(FINISHED))
        _game(kept, {"interrogator": "p-a"})  # being played: counted, as the round book does
        _end(kept, _game(kept, {"interrogator": "p-a"}), GameResult(FLAGGED, flags=["stuck"]))
        _game(kept, {"interrogator": "p-b"}, solo=True)  # practice
        _game(kept, {"interrogator": "p-d"})  # seated before their consent row landed
        with kept.store.writing() as conn:
            answers = {"prior_awareness": "No"}
            arena_games.save_survey(kept.store, conn, kept.run_id, "p-a", answers, "w1")

        found = kept.people(limit=3)
        assert found.total == 4
        assert [p.participant for p in found.newest] == ["p-d", "p-c", "p-b"]
        everyone = {p.participant: p for p in kept.people(limit=10).newest}
        a, b, c, d = (everyone[f"p-{x}"] for x in "abcd")
        assert (a.rounds, a.games, a.survey, a.recruitment) == (2, 3, True, {"PROLIFIC_PID": "A"})
        assert (b.rounds, b.games, b.survey, b.recruitment) == (0, 1, False, {})
        assert (c.rounds, c.games, c.recruitment) == (0, 0, {"pid": "C"})
        assert (d.rounds, d.games) == (1, 1)
        assert kept.game_counts() == {"playing": 3, "finished": 1, "flagged": 1}
    finally:
        kept.close()
        kept.store.close()

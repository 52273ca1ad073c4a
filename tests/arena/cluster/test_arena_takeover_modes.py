"""Every resumable mode survives its owner's death: played partway on one process, finished on
the other (PostgreSQL + Redis, two real server processes, people over real websockets).

For each mode (a row of MODES, takeover_drivers.py: how to seat its people, play it partway
and finish it, and what its store must hold), the process that owns the game is SIGKILLed, or
SIGSTOPped (slow, not dead) and continued after the game has finished elsewhere. The other
process claims the game, rebuilds it from the store (messages and control events) and plays
it on: the people finish it there with the same transcript rules (every human message stored
once, in order, seqs without a hole, each input applied once), the same remaining time (the
game's stored start kept; a mode's deadline shown again) and its verdict, preferences and
other decisions counted once, audited in SQL. A stopped owner that wakes up, with a message
queued for it while it hung, writes nothing more to the game.
"""

from __future__ import annotations

import signal
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import func, select

from arena_fixtures import Person
from takeover_drivers import MODES, SERVER, Mode, modes_setup
from takeover_gtt_setup import GATE
from takeover_play import WAIT_S, gave_up
from takeover_replay import replayed
from test_arena_multiprocess import arena_processes
from test_arena_takeover import _live
from test_arena_takeover_inputs_wait_for_rebuild import _claimed_by, _owner_port
from turinglab.games.spec import TrialSpec
from turinglab.store.database import Store
from turinglab.store.schema import control_events, games, judgements, messages, outcomes, seats

TIME_SLACK_S = 2.0  # the remaining time after the takeover, as before it
TO_THE_PAUSED = "sent to a process that hangs"
# control events Mode.decisions does not count (presence ones come as pages reconnect)
UNCOUNTED = ("input", "paused", "draw", "away", "back")


def _audit(store: Store, game: str) -> dict[str, Any]:
    """The game as stored, read in SQL (not through the code under test)."""
    with store.engine.connect() as conn:
        (row,) = conn.execute(
            select(games).where(games.c.setup["arena_game"].as_string() == game)
        ).all()
        humans = set(
            conn.execute(
                select(seats.c.seat).where(seats.c.game_id == row.id, seats.c.kind == "human")
            ).scalars()
        )
        said = conn.execute(
            select(messages).where(messages.c.game_id == row.id).order_by(messages.c.seq)
        ).all()
        controls = conn.execute(
            select(control_events.c.idx, control_events.c.kind, control_events.c.data)
            .where(control_events.c.game_id == row.id)
            .order_by(control_events.c.idx)
        ).all()
        ends = conn.execute(
            select(outcomes.c.status, outcomes.c.verdict).where(outcomes.c.game_id == row.id)
        ).all()
        judged = conn.execute(
            select(func.count()).where(judgements.c.game_id == row.id)
        ).scalar_one()
    return {
        "status": row.status,
        "flags": row.flags,
        "worker": str(row.worker),
        "epoch": row.owner_epoch,
        "mode": row.setup["mode"],
        "spec": TrialSpec.from_json(row.setup["trial"]),
        "said": said,
        "seqs": [m.seq for m in said],
        "typed": [m.text for m in said if m.sender in humans],
        "controls": [c.idx for c in controls],
        "decisions": Counter(c.kind for c in controls if c.kind not in UNCOUNTED),
        "inputs": [(c.data["seat"], c.data["input_id"]) for c in controls if c.kind == "input"],
        "ends": [tuple(e) for e in ends],
        "judgements": judged,
        "rows": (len(said), len(controls), judged, len(ends)),
    }


async def _started_at(base: str, game: str) -> float:
    """When the game started, as the process at `base` lists it (admin live.json)."""
    (found,) = [g for g in await _live(base) if g["game"] == game]
    return float(found["started_at"])


@pytest.mark.database
@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGSTOP], ids=["killed", "stopped"])
@pytest.mark.parametrize("name", list(MODES))
async def test_a_game_goes_on_at_the_other_process_when_its_owner_dies(
    name: str,
    stop: signal.Signals,
    postgres_url: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mode: Mode = MODES[name]
    gate = tmp_path / "gate"
    monkeypatch.setenv(GATE, str(gate))  # the servers' models read it (they inherit it)
    if not mode.held:
        gate.touch()
    async with arena_processes(SERVER, postgres_url) as arena:
        store = Store(postgres_url)
        play = None
        stopped = None
        try:
            play = await mode.partway(arena)
            dead = arena.ports.index(await _owner_port(store))
            alive = 1 - dead
            began = await _started_at(arena.bases[dead], play.game)
            owner = arena.procs[dead]
            owner.send_signal(stop)
            stopped = owner if stop == signal.SIGSTOP else None
            if stopped is None:
                owner.wait(10)
            gone = [p for p in play.people.values() if p.base == arena.bases[dead]]
            for p in gone if stopped is not None else ():
                # Queued in the hung process's socket: it must never reach the game or store.
                await p.send(type="message", id="late", channel=mode.channel, text=TO_THE_PAUSED)
            await _claimed_by(store, arena.ports[alive])
            rebuilt: dict[Person, dict[str, Any]] = {}
            for p in play.people.values():
                if p in gone:  # their socket went with the owner: the page gives it up
                    if stopped is None:
                        await p.drop()
                    p.ws = None
                    p.base = arena.bases[alive]
                    first = await p.connect()
                    if first["type"] != mode.frame:
                        first = await p.until(mode.frame, timeout=WAIT_S)
                else:  # sent the rebuilt game as it is taken over
                    first = await p.until(mode.frame, timeout=WAIT_S)
                assert first["game"] == play.game
                rebuilt[p] = first
            assert await _started_at(arena.bases[alive], play.game) == began  # its start kept
            if play.deadline is not None:
                for first in rebuilt.values():
                    assert abs(first["deadline"] - play.deadline) <= TIME_SLACK_S
            gate.touch()  # an AI-only game goes on now, at its new owner
            await mode.finish(play)
            done = _audit(store, play.game)
            if stopped is not None:  # the stale owner wakes: it writes nothing more
                stopped.send_signal(signal.SIGCONT)
                stopped = None
                await gave_up(arena.bases[dead])
                assert _audit(store, play.game)["rows"] == done["rows"]
        finally:
            if stopped is not None:
                stopped.send_signal(signal.SIGCONT)
            for p in play.people.values() if play is not None else ():
                await p.close()
            store.close()
    assert done["status"] == "finished" and done["flags"] == [], done
    assert done["worker"].startswith(f"{arena.ports[alive]}/") and done["epoch"] == 1  # once
    assert done["typed"] == play.typed  # every human message stored once, in order
    assert done["seqs"] == list(range(len(done["seqs"])))
    assert done["controls"] == list(range(len(done["controls"])))
    inputs = done["inputs"]  # each input applied once; the hung owner's never
    assert len(inputs) == len(set(inputs)) and all(i != "late" for _, i in inputs), inputs
    assert done["decisions"] == Counter(mode.decisions), done["decisions"]
    assert done["judgements"] == mode.judgements  # counted once
    (end,) = done["ends"]  # its end, once
    if mode.replays:  # the store is a game by the engine's rules: played again, it so ends
        result = await replayed(modes_setup(), done["mode"], done["spec"], done["said"])
        assert (result.status, result.verdict) == end

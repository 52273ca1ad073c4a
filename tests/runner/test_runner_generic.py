"""The generic runner: any Game, messages written as they are said, flagged games, judgements,
channels, the game's clock, leases and superseded outcomes; planning limits; run ids."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import pytest
import yaml
from pydantic import BaseModel

from turinglab.agents.base import Agent, AgentReply, CallContext, ChatMessage
from turinglab.agents.scripted import ScriptedAgent
from turinglab.config import load_config, parse_config
from turinglab.games.kinds import CHOOSES_CLOCK, GameKind, register
from turinglab.games.spec import FLAGGED, GameResult, Judgement, TrialSpec
from turinglab.games.table import Seat, Table
from turinglab.runner.plan import PlanTooLarge, plan_trials, run_id
from turinglab.runner.scheduler import RunCounters, TrialRunner
from turinglab.store.database import GameEnd, GameStart, SeatRecord, Store

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


async def direct(agent: Agent, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
    return await agent.reply(history, ctx)


class FixedClock:
    def now(self) -> float:
        return 1000.0

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(0)


class TwoChannelGame:
    """A judge talks with a witness on channel a and leaves itself a note on channel b; the
    last trial's witness 'missed its deadline', so that game is flagged."""

    name = "two-channel"

    def __init__(self, hold: asyncio.Event | None = None) -> None:
        self.hold = hold

    def clock_for(self, seats: Mapping[str, Seat]) -> FixedClock:
        return FixedClock()

    def plan(self) -> list[TrialSpec]:
        return [
            TrialSpec(i, f"tc#{i}", self.name, 100 + i, {"judge": "judge", "w": "w"}, {"n": i})
            for i in range(4)
        ]

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        kinds = {"judge": "agent", "w": "stand-in"}
        return {s: Seat(s, name, agents[name], kinds[s]) for s, name in spec.seats.items()}

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        table.post("judge", "hello", visible_to=("judge", "w"), channel="a")
        await table.speak("w", visible_to=("judge", "w"), channel="a")
        table.post("judge", "note to self", visible_to=("judge",), channel="b")
        if self.hold is not None:
            await self.hold.wait()
        judgement = Judgement("judge", "verdict", verdict="w", confidence=80, reason="typos")
        flags = ["w missed its deadline"] if spec.params["n"] == 3 else []
        return GameResult("finished", 1, True, {"n": spec.params["n"]}, [judgement], flags)

    def identity(self) -> dict[str, Any]:
        return {}


class TwoChannelExperiment(BaseModel):
    game: Literal["two-channel"]


# A game outside the built-in ones is one registration; its kind says it chooses its clock.
register(
    GameKind(
        "two-channel",
        TwoChannelExperiment,
        lambda cfg, context: TwoChannelGame(),
        capabilities=frozenset({CHOOSES_CLOCK}),
    )
)

AGENTS = {"judge": ScriptedAgent("judge", ["?"]), "w": ScriptedAgent("w", ["hi there"])}


def make_runner(store: Store, game: TwoChannelGame, rid: str, **kw: Any) -> TrialRunner:
    return TrialRunner(
        store,
        game,
        AGENTS,
        direct,
        run_id=rid,
        max_in_flight=4,
        max_attempts=2,
        environment_id=None,
        counters=RunCounters(planned=4, already_finished=0),
        **kw,
    )


async def test_any_game_flagged_judgements_channels_clock(store_location: str) -> None:
    store = Store(store_location)
    game = TwoChannelGame()
    assert store.create_run("tc", "tc", game.name, {}, {}, game.plan())
    runner = make_runner(store, game, "tc")
    await runner.run()
    runner.close()
    games = store.games("tc")
    assert sorted(g.status for g in games) == ["finished"] * 3 + [FLAGGED]
    rows = store.results("tc")
    assert [r.idx for r in rows] == [0, 1, 2]  # the flagged game is excluded...
    flagged = store.results("tc", include_flagged=True)[-1]
    assert flagged.status == FLAGGED and flagged.flags == ("w missed its deadline",)
    row = rows[0]
    assert row.game == "two-channel" and row.seats == {"judge": "judge", "w": "w"}
    assert row.params["n"] == 0 and row.extra["distinguisher_turns"] is None
    assert row.histories["w"] == [
        {"role": "user", "content": "hello"},
        {"role": "assistant", "content": "hi there"},
    ]  # the witness never sees channel b
    assert len(row.histories["judge"]) == 3
    game_id = row.attempt_id
    assert [m.text for m in store.transcript(game_id, channel="b")] == ["note to self"]
    assert {m.created_at for m in store.transcript(game_id)} == {1000.0}  # the game's clock
    assert {(s.seat, s.kind) for s in store.seats(game_id)} == {
        ("judge", "agent"),
        ("w", "stand-in"),
    }
    js = [j.judgement for j in store.judgements("tc")]
    assert len(js) == 4 and {(j.verdict, j.confidence, j.tie) for j in js} == {("w", 80.0, False)}
    store.close()


async def test_messages_are_durable_while_the_game_is_played(store_location: str) -> None:
    store = Store(store_location)
    hold = asyncio.Event()
    game = TwoChannelGame(hold)
    store.create_run("tc", "tc", game.name, {}, {}, game.plan())
    runner = make_runner(store, game, "tc")
    task = asyncio.create_task(runner.run())
    for _ in range(200):
        await asyncio.sleep(0.02)
        playing = store.games("tc", status="playing")
        if len(playing) == 4 and all(len(store.transcript(g.id)) == 3 for g in playing):
            break
    else:
        raise AssertionError("messages of games in play were not written")
    task.cancel()  # a crash mid-game: everything said so far is already in the store
    with pytest.raises(asyncio.CancelledError):
        await task
    runner.close()
    assert len(store.games("tc", status="playing")) == 4
    assert store.failed_attempts("tc") == []
    # The next worker replays the trials as fresh games and marks the old ones interrupted.
    hold.set()
    again = make_runner(store, game, "tc")
    await again.run()
    again.close()
    statuses = sorted(g.status for g in store.games("tc"))
    assert statuses == ["finished"] * 3 + ["flagged"] + ["interrupted"] * 4
    assert len(store.results("tc", include_flagged=True)) == 4
    store.close()


def test_an_outcome_that_loses_the_race_is_superseded(store_location: str) -> None:
    store = Store(store_location)
    game = TwoChannelGame()
    store.create_run("tc", "tc", game.name, {}, {}, game.plan()[:1])
    with store.writing() as conn:
        (a,) = store.claim_trials(conn, "tc", "worker-a", 5, lease_s=0.0, max_attempts=2)
    with store.writing() as conn:  # a's lease has expired: b takes the trial over
        (b,) = store.claim_trials(conn, "tc", "worker-b", 5, lease_s=60, max_attempts=2)
        assert store.claim_trials(conn, "tc", "worker-c", 5, lease_s=60, max_attempts=2) == []
    assert a.trial_id == b.trial_id
    result = GameResult("finished", 1, True)
    ids = {}
    for worker in ("worker-a", "worker-b"):
        start = GameStart("tc", a.trial_id, 1, game.name, 0.0, [SeatRecord("w", "w")], None, worker)
        with store.writing() as conn:
            ids[worker] = store.start_game(conn, start)
    ends = {}
    for worker in ("worker-b", "worker-a"):
        end = GameEnd(ids[worker], a.trial_id, 1.0, 0, 0, 0, worker=worker, result=result)
        with store.writing() as conn:
            ends[worker] = store.end_game(conn, end)
    assert ends == {"worker-b": "finished", "worker-a": "superseded"}
    assert len(store.results("tc")) == 1
    state = store.state("tc", 2)
    assert (state.finished, state.open, state.leased) == (1, 0, 0)
    store.close()


def _plan_digest(specs: list[Any]) -> str:
    fields = ("index", "key", "seed", "actor", "distinguisher", "target", "x_is_target")
    facts = [(*(getattr(s, f) for f in fields), s.budget, s.variant) for s in specs]
    return hashlib.sha256(repr(facts).encode()).hexdigest()[:16]


@pytest.mark.parametrize(
    ("name", "rid", "digest"),
    [  # computed with the code at the skeleton commit (702c42a), before GTT became a kind
        ("gtt-offline.yaml", "935473b9897d82bf", "cc82d5264da8cf9a"),
        ("gtt-variants-offline.yaml", "6eeca4bf66e7d6c5", "7edeb06cc8cf92c7"),
    ],
)
def test_run_ids_and_seeds_of_existing_configs_do_not_change(
    name: str, rid: str, digest: str
) -> None:
    # Their prompts were the first releases' (now `prompt_set: v1`; the default is the paper's).
    data = yaml.safe_load((CONFIGS / name).read_text())
    data["experiment"]["prompt_set"] = "v1"
    config = parse_config(data, base_dir=CONFIGS)
    assert run_id(config) == rid
    assert _plan_digest(plan_trials(config)) == digest
    assert _plan_digest(plan_trials(load_config(CONFIGS / name))) == digest


def test_a_huge_design_is_refused_before_it_is_planned() -> None:
    config = parse_config(
        {
            "name": "huge",
            "agents": {n: {"kind": "scripted", "replies": ["x"]} for n in "abcd"},
            # Each field within its bound (trials_per_pair ≤ 100,000), the design not: 25 cells.
            "experiment": {
                "game": "gtt",
                "universe": ["a", "b", "c", "d", "eliza"],
                "trials_per_pair": 100_000,
            },
        }
    )
    with pytest.raises(PlanTooLarge, match=r"experiment\.trials_per_pair: .*2,500,000 trials"):
        plan_trials(config)

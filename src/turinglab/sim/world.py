"""One simulated arena: `processes` real arena apps (create_app: web layer, hub, cluster, store
bridge) on one SQLite store and one fake Redis, the benchmark's people playing them over the
simulated network, and the faults of the schedule, all on the virtual loop.

Each process's work runs in tasks marked with its name (a context variable every task it
starts inherits), so a crash can end exactly its work: its sockets are cut, its Redis
connections and its database refuse it from that moment (nothing more it does reaches anyone,
as after SIGKILL), its unwritten commits are dropped, then its tasks are cancelled.
"""

from __future__ import annotations

import asyncio
import contextvars
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fakeredis
from sqlalchemy import event
from sqlalchemy.exc import OperationalError

from turinglab.arena.core.store_bridge import ArenaStore, arena_run_id
from turinglab.arena.web.app import create_app
from turinglab.bench.arena_bench import engine_setup
from turinglab.bench.arena_people import Script, person
from turinglab.bench.arena_tally import Tally
from turinglab.sim import fake_redis, row_writers
from turinglab.sim.asgi_net import Network
from turinglab.sim.determinism import EPOCH
from turinglab.sim.sim_writer import SimWriter
from turinglab.sim.store_faults import StoreFaults
from turinglab.sim.virtual_loop import WHOSE, VirtualLoop
from turinglab.store.database import Store

COMMIT_INTERVAL_S = 0.02
# What no frame may show before a game's reveal, besides the AI's names (SEATS: the three-party
# game's seat ids; as tests/arena/core/test_arena_leaks.py hides them). '"human"' and '"ai"'
# hold here because three-party's choices are channels: a two-party mode offers them as choices.
SEATS = ("witness_a", "witness_b")
TELLING = ('"kind"', '"human"', '"ai"', '"a person"', "scripted", "person:", *SEATS)


@dataclass(frozen=True)
class Plan:
    """One schedule's shape, drawn from its seed (`draw`)."""

    processes: int
    people: int
    rounds: int
    game_s: float
    crash: tuple[str, float] | None  # (process, at s)
    redis_restart: tuple[float, float] | None = None  # (at s, down for s)
    pause: tuple[str, float, float] | None = None  # (process, at s, for s): SIGSTOP, SIGCONT
    latency_s: tuple[float, float] = (0.001, 0.03)
    reconnect_p: float = 0.2
    abandon_p: float = 0.05
    end_early_p: float = 0.0  # per game: the interrogator ends the talk early (not by default)
    give_up_p: float = 0.0  # per break of a page mid-game: closed for good (not by default)
    # The `postgres` fault (sim/store_faults.py): a database with round trips, and maybe one
    # outage: ("refuses" | "stalls", at s, for s).
    slow_store: bool = False
    postgres: tuple[str, float, float] | None = None
    redis_pause: tuple[float, float] | None = None  # (at s, for s): Redis SIGSTOP, SIGCONT
    # (process, at s, for s): that process's link to Redis cut (connections reset, Redis kept)
    redis_cut: tuple[str, float, float] | None = None

    @classmethod
    def draw(cls, rng: random.Random, processes: int, faults: frozenset[str]) -> Plan:
        people = rng.randint(2, 6)
        crash = None
        if "crash" in faults and processes > 1 and rng.random() < 0.8:
            crash = (f"p{rng.randrange(processes)}", rng.uniform(5.0, 90.0))
        restart = None
        if "redis-restart" in faults and rng.random() < 0.5:
            restart = (rng.uniform(5.0, 90.0), rng.uniform(0.5, 4.0))
        game_s = rng.choice([30.0, 60.0])
        pause = None  # drawn last: the other faults' seeds keep their schedules
        if "pause" in faults and processes > 1 and rng.random() < 0.8:
            # Shorter and longer than the takeover's 10 s: woken as owner, or after a takeover.
            pause = (f"p{rng.randrange(processes)}", rng.uniform(5.0, 90.0), rng.uniform(2.0, 30.0))
        postgres = None  # drawn after the pause, for the same reason
        if "postgres" in faults and rng.random() < 0.8:
            kind = rng.choice(("refuses", "stalls"))
            postgres = (kind, rng.uniform(5.0, 90.0), rng.uniform(1.0, 10.0))
        redis_pause = None  # drawn last, for the same reason
        if "redis-pause" in faults and rng.random() < 0.8:
            redis_pause = (rng.uniform(5.0, 90.0), rng.uniform(0.5, 20.0))
        redis_cut = None  # drawn last, for the same reason
        if "redis-cut" in faults and rng.random() < 0.8:
            # Shorter and longer than the heartbeat's 10 s: the others may take its games over.
            who = f"p{rng.randrange(processes)}"
            redis_cut = (who, rng.uniform(5.0, 90.0), rng.uniform(1.0, 25.0))
        return cls(
            processes,
            people,
            2,
            game_s,
            crash,
            restart,
            pause,
            slow_store="postgres" in faults,
            postgres=postgres,
            redis_pause=redis_pause,
            redis_cut=redis_cut,
        )


@dataclass
class Process:
    name: str
    app: Any
    store: Store
    writer: SimWriter
    lifespan: asyncio.Queue[dict[str, Any]] = field(default_factory=asyncio.Queue)
    tasks: list[asyncio.Task[Any]] = field(default_factory=list)


class World:
    def __init__(self, plan: Plan, rng: random.Random, db: Path, seed: int) -> None:
        self.plan = plan
        self.rng = rng
        self.seed = seed
        self.url = f"sqlite:///{db}"
        self.redis = fakeredis.FakeServer()
        self.redis_faults = fake_redis.RedisFaults(self.redis, self._now)
        self.dead: set[str] = set()
        self.net = Network(rng, self.run, plan.latency_s)
        self.processes: dict[str, Process] = {}
        self.events: list[str] = []  # the schedule's trace: what happened, when
        self.writes: list[tuple[Any, ...]] = []  # each game row's writer (sim/row_writers.py)
        self.setup = engine_setup(plan.game_s, plan.rounds, 120.0, seed)
        self.store_faults = (
            StoreFaults(plan.postgres, self._now, random.Random(f"{seed}:store"))
            if plan.slow_store
            else None
        )

    # ---- processes ---------------------------------------------------------------------------

    def run(self, process: str, coro: Any) -> asyncio.Task[Any]:
        """Start `coro` as work of `process` (its tasks inherit the mark)."""
        context = contextvars.copy_context()
        context.run(WHOSE.set, process)
        return asyncio.get_running_loop().create_task(coro, context=context)

    def _refuse_when_dead(self, store: Store, name: str) -> None:
        def check(*_: Any) -> None:
            if name in self.dead:
                raise OperationalError("sim", {}, Exception(f"{name} is dead"))
            if self.store_faults is not None:
                self.store_faults.check()

        event.listen(store.engine, "before_cursor_execute", check)

    async def start(self) -> None:
        faults = self.store_faults
        if faults is not None:
            loop = asyncio.get_running_loop()
            assert isinstance(loop, VirtualLoop)
            loop.executor_delay = faults.delay
        for k in range(self.plan.processes):
            name = f"p{k}"
            store = Store(self.url)
            self._refuse_when_dead(store, name)
            row_writers.watch(store.engine, name, self._now, self.writes)
            writer = SimWriter(store, COMMIT_INTERVAL_S, faults.delay if faults else None)
            setup = engine_setup(self.plan.game_s, self.plan.rounds, 120.0, self.seed)
            kept = ArenaStore(store, setup, worker=name, writer=writer)
            app = create_app(
                setup,
                admin_password="sim",
                store=kept,
                redis_url="redis://sim/0",
                secret="sim secret",
                namespace="sim",
            )
            proc = Process(name, app, store, writer)
            self.processes[name] = proc
            self.net.apps[name] = app
            proc.tasks.append(self.run(name, writer.pump()))
            await self._started(proc)
            self.events.append(f"{self._now():8.3f} {name} up")

    async def _started(self, proc: Process) -> None:
        """Run the app's lifespan (the hub started, its ticker) and wait for its startup."""
        done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()

        async def send(message: dict[str, Any]) -> None:
            if message["type"].startswith("lifespan.startup") and not done.done():
                done.set_result(message)

        scope = {"type": "lifespan", "asgi": {"version": "3.0"}, "state": {}}
        proc.tasks.append(self.run(proc.name, proc.app(scope, proc.lifespan.get, send)))
        proc.lifespan.put_nowait({"type": "lifespan.startup"})
        reply = await done
        if reply["type"].endswith("failed"):
            raise RuntimeError(f"{proc.name} did not start: {reply.get('message')}")

    def crash(self, name: str) -> None:
        """SIGKILL: from now on nothing of `name`'s reaches anyone; then its work is ended."""
        proc = self.processes[name]
        self.dead.add(name)
        self.net.crash(name)
        self.redis_faults.killed(name)
        proc.writer.crash()
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualLoop)
        for task in loop.tasks_of(name):
            task.cancel()
        self.events.append(f"{self._now():8.3f} {name} killed")

    def pause(self, name: str, for_s: float) -> None:
        """SIGSTOP for `for_s`, then SIGCONT: none of `name`'s work runs meanwhile (its tasks,
        timers, socket handlers, writer's pump; so it answers no socket, reads nothing from
        Redis, commits nothing and its heartbeat lapses), then it all goes on, late."""
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualLoop)
        loop.pause(name)
        self.events.append(f"{self._now():8.3f} {name} paused for {for_s:.1f} s")
        loop.call_later(for_s, self._resume, name)

    def _resume(self, name: str) -> None:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, VirtualLoop)
        loop.resume(name)
        self.events.append(f"{self._now():8.3f} {name} resumed")

    def _restart_redis(self, down_s: float) -> None:
        self.redis_faults.restart(down_s)
        self.events.append(f"{self._now():8.3f} redis restarted empty (down {down_s:.1f} s)")

    def _pause_redis(self, for_s: float) -> None:
        self.redis_faults.pause(for_s)
        self._note(f"redis paused for {for_s:.1f} s")
        asyncio.get_running_loop().call_later(for_s, self._note, "redis goes on")

    def _cut_redis(self, name: str, for_s: float) -> None:
        self.redis_faults.cut(name, for_s)
        self._note(f"{name} cut off from redis for {for_s:.1f} s")
        asyncio.get_running_loop().call_later(for_s, self._note, f"{name} reaches redis again")

    async def stop(self) -> None:
        if self.plan.postgres is not None:  # the database back first: the writers' last
            _, at, for_s = self.plan.postgres  # commits run on the thread's way (real sleeps)
            if at + for_s > self._now():
                await asyncio.sleep(at + for_s - self._now())
        for proc in self.processes.values():
            if proc.name not in self.dead:
                proc.lifespan.put_nowait({"type": "lifespan.shutdown"})
        await asyncio.sleep(1.0)
        for proc in self.processes.values():
            proc.writer.crash() if proc.name in self.dead else proc.writer.close()
            for task in proc.tasks:
                task.cancel()

    def _postgres_back(self) -> None:
        faults = self.store_faults
        assert faults is not None
        self._note(f"postgres back ({faults.refused} statements refused, {faults.held} held)")

    def _note(self, what: str) -> None:
        self.events.append(f"{self._now():8.3f} {what}")

    def _now(self) -> float:
        return asyncio.get_running_loop().time()

    # ---- a schedule --------------------------------------------------------------------------

    async def play(self) -> dict[str, Any]:
        await self.start()
        tally = Tally()
        names = [*self.setup.agents, *self.setup.display_names.values()]
        hidden = (*TELLING, *(f'"{n}"' for n in names), *(f"{n} (" for n in names))
        script = Script(
            self.plan.rounds,
            self.plan.reconnect_p,
            self.plan.abandon_p,
            self.seed,
            120.0,
            1.0,
            hidden,
            self.plan.end_early_p,
            self.plan.give_up_p,
        )
        bases = [f"http://{name}" for name in self.processes]
        p = len(bases)
        people = [
            self.run(
                "pages",
                person(
                    self.net,  # type: ignore[arg-type]
                    bases[n % p :] + bases[: n % p],
                    n,
                    EPOCH + self._now() + self.rng.uniform(0.0, 10.0),
                    script,
                    tally,
                ),
            )
            for n in range(self.plan.people)
        ]
        loop = asyncio.get_running_loop()
        if self.plan.crash is not None:
            victim, at = self.plan.crash
            loop.call_later(at, self.crash, victim)
        if self.plan.redis_restart is not None:
            at, down_s = self.plan.redis_restart
            loop.call_later(at, self._restart_redis, down_s)
        if self.plan.pause is not None:
            stopped, at, for_s = self.plan.pause
            loop.call_later(at, self.pause, stopped, for_s)
        if self.plan.redis_pause is not None:
            at, for_s = self.plan.redis_pause
            loop.call_later(at, self._pause_redis, for_s)
        if self.plan.redis_cut is not None:
            who, at, for_s = self.plan.redis_cut
            loop.call_later(at, self._cut_redis, who, for_s)
        if self.plan.postgres is not None:
            kind, at, for_s = self.plan.postgres
            loop.call_later(at, self._note, f"postgres {kind} for {for_s:.1f} s")
            loop.call_later(at + for_s, self._postgres_back)
        results = await asyncio.gather(*people, return_exceptions=True)
        failures = [repr(r) for r in results if isinstance(r, BaseException)]
        await asyncio.sleep(30.0)  # a takeover's writes, the last commits
        await self.stop()
        return {
            "tally": tally,
            "failures": failures,
            "run_id": arena_run_id(self.setup),
            "writes": self.writes,
            "grace_s": self.setup.settings.abandon_after_s,
        }

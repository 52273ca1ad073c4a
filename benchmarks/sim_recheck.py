"""Each regression seed of tests/sim with its fix taken out: it must still break, or the seed
no longer proves its fix (a seed is a schedule of one version of the code; any change to the
cluster's timing moves them). Run after such a change:

    PYTHONHASHSEED=0 PYTHONPATH=src python benchmarks/sim_recheck.py [NAME ...]

Prints, per fix, each seed and what it breaks without the fix ("CLEAN": find another seed).
"""

import contextlib
import subprocess
import sys
from typing import Any

from turinglab.arena.cluster import (
    cluster,
    cluster_base,
    cluster_catchup,
    cluster_heartbeat,
    cluster_hub,
    cluster_presence,
    cluster_queues,
    cluster_routes,
    cluster_takeover,
    shared_rounds,
)
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.games.control_log import ControlLog
from turinglab.sim.run import schedule

CRASHES = frozenset({"crash", "redis-restart"})
PAUSE = frozenset({"pause"})
POSTGRES = frozenset({"crash", "redis-restart", "postgres"})
REDIS_PAUSE = frozenset({"crash", "redis-restart", "redis-pause"})
REDIS_CUT = frozenset({"crash", "redis-restart", "redis-cut"})
GIVE_UP = {"give_up_p": 0.5}  # people who close a page that broke (off in the default plan)


def _never_noticed() -> None:  # a process cut off from Redis neither says so nor is read
    ArenaStore.say_silent = lambda self, process: None  # type: ignore[method-assign]
    ArenaStore.notice_silent = lambda self, process, within_s: False  # type: ignore[method-assign]


def _leave() -> None:  # the Leave's recount only (the join's and connect's stay)
    orig = cluster_queues.ClusterQueues._counted_right

    async def counted(self: Any, pid: str) -> None:
        if sys._getframe(1).f_code.co_filename.endswith("cluster_queues.py"):
            return
        await orig(self, pid)

    cluster_queues.ClusterQueues._counted_right = counted  # type: ignore[method-assign]


async def _nothing(*_: Any) -> None:  # a coroutine fix taken out: does nothing, finds nothing
    return None


class _Forgetful(dict):  # type: ignore[type-arg]
    def __setitem__(self, key: Any, value: Any) -> None:
        pass


def _forget(name: str) -> None:  # a record of the cluster's that keeps nothing
    init = cluster_base.ClusterBase.__init__

    def forgetful(self: Any, *a: Any, **k: Any) -> None:
        init(self, *a, **k)
        setattr(self, name, _Forgetful())

    cluster_base.ClusterBase.__init__ = forgetful  # type: ignore[method-assign]


def _left_here() -> None:
    _forget("left_here")
    _no_left_notes()  # and the same note, shared in Redis by the process they left


def _no_left_notes() -> None:  # the takeover reads no `left:<pid>` note
    carry = cluster_takeover.Takeover._carry_absence

    def without(self: Any, game: Any, noted: Any, killed: bool, left: Any) -> None:
        carry(self, game, noted, killed, {})

    cluster_takeover.Takeover._carry_absence = without  # type: ignore[method-assign]


def _book_decided_anyway() -> None:  # a lost book decided on while the store is out
    seed = shared_rounds.SharedRounds.seed

    async def seeded_or_not(self: Any, run: str, pid: str) -> bool:
        await seed(self, run, pid)
        return True

    shared_rounds.SharedRounds.seed = seeded_or_not  # type: ignore[method-assign]


def _follow_at_once() -> None:  # a person's channel changed on whichever subscription is there
    async def follow(self: Any, pid: str) -> None:
        channel = self._channel(pid)
        if self.sockets.get(pid, 0) > 0:
            await self._pubsub.subscribe(channel)
        else:
            await self._pubsub.unsubscribe(channel)

    cluster_catchup.ClusterCatchup._follow = follow  # type: ignore[method-assign]


def _hung_reconnect() -> None:
    cluster_takeover.HUNG_RECONNECT_S = 0.0  # the note stands: counted from the old owner's


# name -> (take the fix out, seeds, processes, faults[, the people's plan over the seed's])
FIXES: dict[str, tuple[Any, ...]] = {
    "leave-recount": (_leave, (488,), 2, CRASHES),
    "killed-owner": (  # never killed (None): the stopped owner's estimate
        lambda: setattr(cluster_takeover.Takeover, "was_killed", _nothing),
        (161, 958),
        2,
        CRASHES,
    ),
    "tell-unanswered": (
        lambda: setattr(cluster_catchup.ClusterCatchup, "_tell_unanswered", lambda s, n: None),
        (999, 260, 278, 318, 332),
        2,
        CRASHES,
    ),
    "left-here": (_left_here, (157, 321, 671, 785, 988), 2, CRASHES),
    "owners-listed": (
        lambda: setattr(cluster_heartbeat.ClusterHeartbeat, "_list_owners_of_live_games", _nothing),
        (82, 83),
        2,
        CRASHES,
    ),
    "holders-asked": (
        lambda: setattr(cluster_presence.ClusterPresence, "_check_holders_again", lambda s: None),
        (72,),
        3,
        CRASHES,
    ),
    "holding-again": (
        lambda: setattr(cluster_heartbeat.ClusterHeartbeat, "_tell_holding_again", lambda s: None),
        (75, 114, 149),
        2,
        PAUSE,
    ),
    "give-up-if-taken": (
        lambda: setattr(cluster_routes.ClusterRoutes, "_give_up_if_taken", _nothing),
        (3, 22, 71),
        2,
        PAUSE,
    ),
    "hung-reconnect": (_hung_reconnect, (156,), 2, PAUSE),
    "left-note": (_no_left_notes, (83,), 3, CRASHES, GIVE_UP),
    "gone-from-the-death": (
        lambda: setattr(
            cluster_presence.ClusterPresence, "count_gone_from_the_death", lambda s, d, n: None
        ),
        (88,),
        3,
        CRASHES,
        GIVE_UP,
    ),
    "closed-here": (lambda: _forget("closed_here"), (479,), 2, CRASHES),
    "listening": (
        lambda: setattr(cluster_base.ClusterBase, "_say_listening", _nothing),
        (156, 294),
        3,
        CRASHES,
        GIVE_UP,
    ),
    "told-while-connecting": (
        lambda: setattr(cluster_hub, "told_while_waiting", lambda o: contextlib.nullcontext()),
        (18, 40, 43),
        2,
        REDIS_PAUSE,
    ),
    "follow-one-at-a-time": (_follow_at_once, (11, 66, 70), 2, REDIS_PAUSE),
    "away-stored": (lambda: setattr(ControlLog, "away_since", lambda s: {}), (82,), 2, REDIS_PAUSE),
    "book-lost": (_book_decided_anyway, (39, 158, 242, 275), 2, POSTGRES),
    "cut-off-hangs-up": (
        lambda: setattr(cluster_heartbeat.ClusterHeartbeat, "_hang_up_cut_off", _nothing),
        (38,),
        2,
        REDIS_CUT,
    ),
    "back-in-game-here": (
        lambda: setattr(cluster.Cluster, "_back_in_game_here", lambda s, p, o, r: False),
        (98,),
        2,
        REDIS_CUT,
    ),
    "cut-off-alone": (_never_noticed, (4, 51, 58, 91), 2, REDIS_CUT),
    "unrouted": (
        lambda: setattr(cluster.Cluster, "_nowhere_known", lambda s, r: False),
        (128,),
        3,
        POSTGRES,
        {"people": 6},
    ),
}

for name in sys.argv[1:] or list(FIXES):
    take_out, seeds, processes, faults, *people = FIXES[name]
    if len(sys.argv) != 2:  # each fix out alone: an interpreter of its own keeps the others in
        subprocess.run([sys.executable, __file__, name], check=False)
        continue
    take_out()
    for seed in seeds:
        broken = sorted(
            {v["invariant"] for v in schedule(seed, processes, faults, *people)["violations"]}
        )
        print(name, seed, ", ".join(broken) or "CLEAN (no longer proves its fix)", flush=True)

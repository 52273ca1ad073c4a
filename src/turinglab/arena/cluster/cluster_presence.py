"""Whether a person is present, across processes: a socket of theirs here, or on another living
process that told the owner it holds one (`here`, `gone`, and the holders of a process that
died forgotten), and when the owner first counted them gone (for a takeover's new owner).
"""

from __future__ import annotations

from time import monotonic, time
from typing import Any

from turinglab.arena.cluster.cluster_messages import AskHolding, Gone, Here
from turinglab.arena.cluster.cluster_routes import ClusterRoutes

# A heartbeat missing this long, as seen here, is a death: after Redis restarts empty every
# heartbeat is missing until its process beats again (within a beat of Redis coming back, or
# later when that process is busy).
HOLDER_GONE_S = 5.0
# How long a `Gone` this process sent is told again when its listener is back: longer than
# Redis is down or the listeners take to come back, shorter than a game.
GONE_AGAIN_S = 60.0


class ClusterPresence(ClusterRoutes):
    def _present(self, view: Any) -> bool:
        """Whether a person has a socket open here or on another (live) process. A socket
        whose connect is still under way here counts: after a takeover the survivor may take
        longer than the grace to connect the dead process's people (their routes, rounds,
        rebuilt games), and they are back, not gone."""
        pid, relay = view.participant.id, self._publishers.get(view.participant.id)
        return (
            self.sockets.get(pid, 0) > 0
            or any(o is not relay for o in view.outlets)
            or bool(self.holders.get(pid))
        )

    def _check_holders_again(self) -> None:
        """Pub/sub keeps nothing for a subscriber that is away: a `Gone` published while this
        process's listener was, or the other's, is lost, and the owner would count that person
        present through its holder until the game's time was up (sim, three processes, seed
        72: a departure 1.5 s after Redis came back empty, the owner subscribed 0.5 s later).
        Back on Redis, this process asks each holder it counts on again, and tells again each
        process it told lately that a socket here had closed (if that one's question was lost
        because this listener was the one still away)."""
        asked: dict[str, list[str]] = {}
        for pid, held in self.holders.items():
            for proc in held - {self.me}:
                asked.setdefault(proc, []).append(pid)
        for proc, pids in asked.items():
            self._forward(proc, AskHolding(pids=sorted(pids), sender=self.me))
        now = monotonic()
        for pid, (told, at) in list(self._told_gone.items()):
            if now - at <= GONE_AGAIN_S and self.sockets.get(pid, 0) == 0:
                for proc in told:
                    self._forward(proc, Gone(pid=pid, sender=self.me))

    def _note_told_gone(self, pid: str, told: set[str]) -> None:
        """Keep whom we told that `pid`'s socket here closed, for GONE_AGAIN_S; older notes go
        (oldest first: a note is put back at the end), so a long study does not pile them up."""
        now = monotonic()
        self._told_gone.pop(pid, None)
        if told:
            self._told_gone[pid] = (told, now)
        while self._told_gone:
            oldest = next(iter(self._told_gone))
            if now - self._told_gone[oldest][1] <= GONE_AGAIN_S:
                break
            del self._told_gone[oldest]

    def _answer_holding(self, ask: AskHolding) -> None:
        for pid in ask.pids:
            if self.sockets.get(pid, 0) > 0:
                self._holding(ask.sender, Here(pid=pid, sender=self.me))
            else:
                self._forward(ask.sender, Gone(pid=pid, sender=self.me))

    def _note_gone(self, gid: str, seat: str, since: float | None) -> None:
        """Keep when a person was first counted gone (wall time) for a takeover's new owner."""
        key = self.ns + "gone:" + gid
        if since is None:
            self.outbox.put("hdel", key, seat)
        else:
            self.outbox.put("hset", key, seat, f"{time():.3f}")

    async def _forget_dead_holders(self) -> None:
        """Sockets held on a process that has died died with it. Only the survivor that claims
        its games unlists it (Takeover._forget); with three or more processes the others must
        see it gone themselves, or their players whose socket it held would count as present
        for ever, and a partner of one who left would never be told. Gone means its heartbeat
        stayed missing HOLDER_GONE_S: not merely wiped by a Redis restart, or every player
        whose socket is on another process would count as absent and their game be ended."""
        assert self.redis is not None
        named = sorted({proc for held in self.holders.values() for proc in held})
        beats = await self.redis.mget([self.ns + "alive:" + p for p in named]) if named else []
        now = monotonic()
        missing = {proc for proc, beat in zip(named, beats, strict=True) if beat is None}
        self._beat_missing = {p: self._beat_missing.get(p, now) for p in missing}
        dead = {p for p, since in self._beat_missing.items() if now - since >= HOLDER_GONE_S}
        killed = {p for p in dead if await self.takeover.was_killed(p)}
        died_at: dict[str, float] = {}  # pid -> when the killed process they were on died
        for pid, held in self.holders.items():
            for proc in held & killed:
                died_at[pid] = max(died_at.get(pid, 0.0), self._beat_missing[proc])
            held -= dead
        self.count_gone_from_the_death(died_at, now)

    def count_gone_from_the_death(self, died_at: dict[str, float], now: float) -> None:
        """People whose only socket was on a process that was killed (its sockets closed with
        it) and who are not back count as gone since its death, not since now: the partner of
        one who gave up there waited its heartbeat's TTL and HOLDER_GONE_S more (three
        processes, give-up seed 88: told 28.4 s after). `died_at` (monotonic) is when the
        heartbeat was first missing here, a TTL after its last beat: the pages have had that
        long at least to come back. A stopped process's pages may still be on it: those
        people count from now, as before. Someone who came back here after the death and has
        gone again counts from then (default seed 479: back 0.3 s after, away again 8 s later,
        counted gone from the death and told they had left while reconnecting). Called where
        a dead process's sockets are forgotten: here, and by the survivor that unlists it
        (Takeover._forget)."""
        arena = self.arena
        ttl_s = arena.setup.settings.takeover_after_s
        now_c = arena.clock.now()
        for game in list(arena.games.values()):
            if game.result is not None:
                continue
            for seat, view in game.views.items():
                pid = view.participant.id
                if pid in died_at and not self._present(view):
                    since = max(died_at[pid] - ttl_s, self.closed_here.get(pid, 0.0))
                    arena.abandon.carry_over(game.id, seat, now_c - (now - since))

"""Open matching across processes, and a person's inputs: joins queue them in the shared Redis
queues (or blind matching, shared_blind.py), leaves take them out of every queue, people taken
by a process that died before seating them are queued again, and `handle` sends an input to
its game's owner or plays it here.
"""

from __future__ import annotations

import asyncio
import logging
from time import monotonic
from typing import TYPE_CHECKING

from turinglab.arena.cluster.cluster_base import CATCHUP_S
from turinglab.arena.cluster.cluster_messages import Input
from turinglab.arena.cluster.cluster_presence import ClusterPresence
from turinglab.arena.cluster.shared_rounds import BookLost
from turinglab.arena.core import frames as F
from turinglab.arena.core.live import InputRejected, Outlet
from turinglab.arena.core.metrics import fault
from turinglab.arena.core.participants import Participant

if TYPE_CHECKING:
    from turinglab.arena.core.modes import ArenaMode, ArenaSettings

log = logging.getLogger(__name__)


class ClusterQueues(ClusterPresence):
    async def handle(
        self, participant: Participant, frame: F.ClientFrame, *, forwarded: bool = False
    ) -> None:
        self.person(participant.id)
        if not forwarded:
            owner = await self.takeover.owner_once_rebuilt(participant.id)
            if owner not in (None, self.me) and isinstance(frame, F.Join):
                assert owner is not None and self.redis is not None
                # That owner has not answered yet, or has died (with a game to be taken over
                # or a route it had no time to delete): a join sent there would be lost.
                waiting = participant.id in self.catchup
                if waiting or not await self.redis.exists(self.ns + "alive:" + owner):
                    self._held_joins[participant.id] = frame
                    self.catchup.setdefault(participant.id, monotonic() + CATCHUP_S)
                    return
            if owner is not None and owner != self.me:
                raw = frame.model_dump_json()
                self._holding(owner, Input(pid=participant.id, raw=raw, sender=self.me))
                if getattr(frame, "id", None) is not None:  # answered: told if it is not
                    self._input_sent.setdefault(participant.id, monotonic())
                return
        if isinstance(frame, F.Join):
            mode = self.arena.setup.mode(frame.mode)
            if mode is not None and not mode.solo and frame.consent:
                await self._join(participant, frame)
                return
        elif isinstance(frame, F.Leave):
            await self.leave_queues(participant.id, forwarded=forwarded)
            # The lobby that answers it (hub._leave) shows the book just loaded from Redis,
            # which may count a round the store lacks (a flagged game's give-back lost on a
            # connection a Redis restart had reset: sim seeds 230, 801): a "rounds-done" is
            # checked against the store first, as on a join or a connect.
            await self._counted_right(participant.id)
        elif await self._taken_while_silent(participant):  # sent on to its new owner
            await self.handle(participant, frame, forwarded=forwarded)
            return
        self.arena.handle(participant, frame)

    async def _taken_while_silent(self, participant: Participant) -> bool:
        """Whether `participant`'s game here was taken over while this process was silent
        past its TTL (stopped, cut off), before its heartbeat has found out: then it is given
        up here, not answered here (an `ack` for an input its new owner never gets: a
        verdict lost, sim seed 3 under `pause`)."""
        game = self.arena.games.get(participant.game or "")
        ttl_s = self.arena.setup.settings.takeover_after_s
        if game is None or game.result is not None or monotonic() - self._beat_ok < ttl_s:
            return False
        return await self._give_up_if_taken(game) is not None

    def _queue_turn(self, pid: str) -> asyncio.Lock:
        return self._queue_turns.setdefault(pid, asyncio.Lock())

    async def leave_queues(self, pid: str, *, forwarded: bool = False) -> None:
        """Out of every queue at once, the shared ones included (a Leave, a page closed while
        queued, consent withdrawn): other processes pair people from Redis, so leaving the
        local lobby alone would leave them matchable there. Someone waiting blind on another
        process is let go of there: that process is told, as if they had sent it a Leave."""
        async with self._queue_turn(pid):
            await self._leave_queues(pid, forwarded=forwarded)

    async def _leave_queues(self, pid: str, *, forwarded: bool) -> None:
        assert self.redis is not None
        # Local state first, before any await: a page reconnecting here meanwhile must not be
        # told they wait when they are being let go.
        blind_here = pid in self.blind.waiting or forwarded
        if blind_here:
            await self.blind.leave(pid)
        if not await self._unqueue(pid):  # queued elsewhere, maybe
            await self.queued.leave(pid)
        if not blind_here:
            await self.blind.leave(pid)  # not adopted back here if a taker dies
            found = await self.redis.get(self.ns + "blind-at:" + pid)
            at = "" if found is None else str(found)
            if at and at != "seated" and not at.startswith("taken:") and at != self.me:
                leave = F.Leave(type="leave").model_dump_json()
                self._forward(at, Input(pid=pid, raw=leave))
        await self.books.load(self._run(), pid, self.arena.lobby.rounds)

    async def _join(self, participant: Participant, frame: F.Join) -> None:
        async with self._queue_turn(participant.id):  # after a leave still under way
            await self._join_now(participant, frame)

    async def _join_now(self, participant: Participant, frame: F.Join) -> None:
        participant.consented = True
        current = self.arena.games.get(participant.game or "")
        if current is not None and current.result is None:
            raise InputRejected("in-game", "You are already in a game.")
        mode = self.arena.setup.mode(frame.mode)
        assert mode is not None
        participant.game = None
        pid, book = participant.id, self.arena.lobby.rounds
        self.seen.pop(pid, None)  # their last game is over: any relayed from now is a new one
        settings = self.arena.setup.settings
        if settings.design is not None:  # blind: the design decides, the wait is drawn
            await self._unqueue(pid)
            joined = await self.blind.join(self._run(), pid, mode, settings, book)
            told = self.arena.waiting_frame(pid) if joined else self.arena.state_frame(participant)
            self.arena.send(participant, told)
            return
        await self._queue(participant, mode)

    async def _queue(
        self, participant: Participant, mode: ArenaMode, waited_s: float = 0.0, told: bool = False
    ) -> None:
        """Pair `participant` with someone queued, or queue them, `waited_s` into their wait
        (`told`: already told they wait, while their round book could not be rebuilt)."""
        pid, book = participant.id, self.arena.lobby.rounds
        # Noted first: if this process dies after pairing them but before seating them, the
        # one they reconnect to adopts them (queue_adopt.py); deleted once they are seated.
        await self.queued.queued(pid, mode.name, waited_s)
        shown = self._game_shown.get(pid)
        try:
            taken = await self.books.take_or_wait(self._run(), mode.name, pid, self.me, book)
        except BookLost:
            self._wait_unbooked(participant, mode, waited_s, tell=not told)
            return
        # "Done" ends their study: first make sure no round counted is one that never existed.
        if taken.outcome == "done" and await self.books.recount(self._run(), pid, book):
            taken = await self.books.take_or_wait(self._run(), mode.name, pid, self.me, book)
        log.debug("queue %s: %s %s", pid, taken.outcome, taken.partner)
        if taken.outcome == "waiting" and self._game_shown.get(pid) != shown:
            # Queued, and taken at once by another process, whose new game has been relayed
            # to them while Redis answered here: "waiting" now would hide it.
            return
        if taken.outcome == "done":  # on to the exit survey
            self.waiting.pop(pid, None)
            self.outbox.put("delete", self.queued.key(pid))
            self.arena.send(participant, self.arena.state_frame(participant))
            return
        if taken.outcome == "waiting":
            self.waiting[pid] = (mode.name, self.arena.clock.now() - waited_s)
            self.arena.send(participant, self.arena.waiting_frame(pid, waited_s))
            return
        self.waiting.pop(pid, None)
        partner = self.person(taken.partner_id)
        queuer = str(taken.partner).split("|", 1)[1]
        if queuer != self.me:
            # Their socket is where they queued: present through that process from the start
            # (as if it had said so) until it says they left or is found dead. Else, stopped,
            # it tells nobody, and a page still open there is counted gone (sim seeds 17, 22).
            self.holders.setdefault(partner.id, set()).add(queuer)
        people = [participant, partner] if taken.role == "interrogator" else [partner, participant]
        await self._seat(mode, people)
        self.arena.answer_join(participant)

    def _wait_unbooked(
        self, participant: Participant, mode: ArenaMode, waited_s: float, tell: bool = True
    ) -> None:
        """Redis lost their round book and the store cannot rebuild it now: they are told they
        wait, and queued at a tick once the store answers (`_queue_unbooked`)."""
        pid = participant.id
        self._unbooked[pid] = (mode.name, self.arena.clock.now() - waited_s)
        if tell:
            log.warning("queue %s: round book lost and the store out; queued once it answers", pid)
            self.arena.send(participant, self.arena.waiting_frame(pid, waited_s))

    async def _queue_unbooked(self) -> None:
        now = self.arena.clock.now()
        for pid, entry in list(self._unbooked.items()):
            if self._unbooked.get(pid) != entry:  # let go meanwhile
                continue
            del self._unbooked[pid]
            mode = self.arena.setup.mode(entry[0])
            if mode is None:
                continue
            await self._queue(self.person(pid), mode, now - entry[1], told=True)
            if pid in self._unbooked:
                return  # the store still out: the others wait for the next tick too

    async def _seat(self, mode: ArenaMode, people: list[Participant]) -> None:
        """Seat people counted in the shared book: people[0] interrogates, with the next AI
        witness groups of their own shared order."""
        free = len(mode.witnesses) - (len(people) - 1)
        n = min(free, mode.ai_groups_per_game or free)  # as lobby.py: an STT session meets one
        lobby, judge = self.arena.lobby, people[0].id
        groups = await self.books.draw_groups(
            self._run(), judge, mode.name, mode.ai_agents, n, lobby.rng
        )
        lobby.seat_counted(mode, people, groups)

    async def _seat_ids(self, mode: ArenaMode, pids: list[str]) -> None:
        await self._seat(mode, [self.person(pid) for pid in pids])

    def _finished_short(self, pid: str, _excused: int) -> None:
        """Their witness rounds were excused (shared_blind.py): on to the exit survey."""
        person = self.person(pid)
        self.arena.send(person, self.arena.state_frame(person))

    def _no_match(self, pid: str, waited: float) -> None:
        self.arena.send(self.person(pid), F.Status(state="no-match", waited_s=waited))

    async def _unqueue(self, pid: str) -> bool:
        """Take a person out of the queue; False when another process took them meanwhile."""
        assert self.redis is not None
        if self._unbooked.pop(pid, None) is not None:
            return True  # told they wait, never queued
        entry = self.waiting.pop(pid, None)
        if entry is None:
            return False
        self.outbox.put("delete", self.queued.key(pid))
        removed = await self.redis.lrem(self.ns + "queue:" + entry[0], 0, f"{pid}|{self.me}")
        if not removed:  # the process that took them counts them present through this one
            self._taken_as_they_left.add(pid)
        return bool(removed)

    async def _waits(self, pid: str, outlet: Outlet | None = None) -> bool:
        """Whether `pid` waits for a match: here, or on a live process (which may still seat
        them), and is told so; or queued on a process that died, and is queued here now
        (queue_adopt.py). `outlet`: the socket connecting, else all of theirs."""
        found = None
        if pid not in self.waiting and not await self._waits_blind(pid):
            found = await self.queued.find(pid)
            if found.state == "none":
                return False
        if outlet is not None:
            self.arena.outlets.setdefault(pid, set()).add(outlet)
        if found is not None and found.state in ("adopted", "vanished"):
            await self._adopt_queued(pid, found.mode, found.waited_s)
        elif outlet is not None:
            outlet(self.arena.waiting_frame(pid))
        else:
            self.arena.send(self.person(pid), self.arena.waiting_frame(pid))
        return True

    async def _waits_blind(self, pid: str) -> bool:
        """Whether `pid` waits for a blind match, here or on another process; one who waited
        on a process that died is adopted here (shared_blind.py), or their page would show
        the lobby while they believe they wait, and nobody would seat them or time them out."""
        settings = self.arena.setup.settings
        if settings.design is None:
            return False
        book, mode_of = self.arena.lobby.rounds, self.arena.setup.mode
        return await self.blind.watch(self._run(), pid, settings, book, mode_of)

    async def _counted_right(self, pid: str) -> None:
        """Before a person is shown the lobby: if it would tell them their study is done, first
        make sure no round counted is one the store lacks (a game a dying process showed them
        and never stored; a pair it counted and never seated)."""
        book = self.arena.lobby.rounds
        if book.done(pid):
            await self.books.recount(self._run(), pid, book)

    async def _tick_queues(self, settings: ArenaSettings) -> None:
        """A lone waiter meets AI witnesses, or is sent on, if nobody took them meanwhile;
        people taken and never seated are queued again, those queued on a dead process
        adopted here."""
        now = self.arena.clock.now()
        for pid, (mode_name, since) in list(self.waiting.items()):
            mode = self.arena.setup.mode(mode_name)
            waited = now - since
            alone = (
                mode is not None
                and len(mode.witnesses) == 1
                and waited >= settings.ai_after_s
                and self.arena.lobby.rounds.may(pid, "interrogator")  # mirrored as they queued
            )
            if mode is None or not (alone or waited >= settings.max_wait_s):
                continue
            if not await self._unqueue(pid):  # matched by another process
                log.debug("unqueue %s: taken by another process", pid)
                self._taken[pid] = (mode_name, waited, monotonic())
                continue
            person = self.person(pid)
            if alone:
                assert mode is not None
                try:
                    await self.books.count_alone(self._run(), pid, self.arena.lobby.rounds)
                except BookLost:
                    self._wait_unbooked(person, mode, waited)
                    continue
                await self._seat(mode, [person])
            else:
                self.arena.send(person, F.Status(state="no-match", waited_s=waited))
        await self._queue_unbooked()
        await self._taken_never_seated(settings.takeover_after_s)
        for pid in list(self.queued.elsewhere):  # queued on another process: has it died?
            found = await self.queued.find(pid)
            if found.state == "adopted" or (
                found.state == "vanished"  # their entry lost with Redis, nobody answering them
                and pid in self.sockets
                and not await self._in_live_game(pid)
            ):
                await self._adopt_queued(pid, found.mode, found.waited_s)

    async def _taken_never_seated(self, after_s: float) -> None:
        """People another process took from the queue here: seated there within `after_s`
        (their game's route, or its frames relayed here), or it died first, and they are
        queued here again rather than left waiting untold."""
        now_m = monotonic()
        for pid, (mode_name, waited, at) in list(self._taken.items()):
            if now_m - at < after_s:
                continue
            del self._taken[pid]
            mode = self.arena.setup.mode(mode_name)
            log.debug(
                "taken %s: socket %s seen %s waiting %s/%s",
                pid,
                pid in self.sockets,
                pid in self.seen,
                pid in self.waiting,
                pid in self.blind.waiting,
            )
            if (
                mode is None
                or pid not in self.sockets
                or pid in self.seen  # a game's frames relayed here since they joined
                or pid in self.waiting
                or pid in self.blind.waiting
                or await self._in_live_game(pid)
            ):
                continue
            fault(log, "taken-never-seated", participant=pid, after_s=after_s)
            # The process that took them counted their round and died: not a round played.
            await self.books.recount(self._run(), pid, self.arena.lobby.rounds)
            await self._queue(self.person(pid), mode, waited + now_m - at)

    async def count_taken_away(self) -> None:
        """People queued here whom another process took from the queue to pair them: one that
        died before seating them told them nothing, and their entry is gone, so nobody else
        would take them. Once a process is lost, those no longer in the queue count as taken
        (`_taken_never_seated` queues them again if no game of theirs shows up)."""
        assert self.redis is not None
        # Only those queued before the queues are read: someone queued while Redis answers
        # is in `waiting` now but not in what it read.
        before = dict(self.waiting)
        if not before:
            return
        modes = sorted({mode for mode, _ in before.values()})
        queues = self.redis.pipeline(transaction=False)
        for mode in modes:
            queues.lrange(self.ns + "queue:" + mode, 0, -1)
        listed = {m: set(q) for m, q in zip(modes, await queues.execute(), strict=True)}
        now_c, now_m = self.arena.clock.now(), monotonic()
        for pid, (mode, since) in before.items():
            if self.waiting.get(pid) == (mode, since) and f"{pid}|{self.me}" not in listed[mode]:
                log.debug("counted as taken: %s", pid)
                del self.waiting[pid]
                self._taken[pid] = (mode, now_c - since, now_m)

    async def _adopt_queued(self, pid: str, mode_name: str, waited_s: float) -> None:
        mode = self.arena.setup.mode(mode_name)
        person = self.person(pid)
        if mode is None:  # not a mode of this arena any more
            self.arena.send(person, self.arena.state_frame(person))
            return
        log.info("open matching: %s adopted from a dead process (waited %.1f s)", pid, waited_s)
        # It may have paired and counted them before it died, seating nobody: undo that.
        await self.books.recount(self._run(), pid, self.arena.lobby.rounds)
        await self._queue(person, mode, waited_s)

"""Pairing people across processes for blind matching (shared_blind.py): the Redis side of
taking a witness, each step one Lua script (shared_blind_scripts.py), so two processes never
take the same person. Who is taken is the rule's choice (blind_rule.py), made here from the
offer set and the shared round books."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from turinglab.arena.cluster import shared_blind_scripts as lua
from turinglab.arena.cluster.shared_rounds import BOOK_TTL_S
from turinglab.arena.core.blind_rule import Offered, choose_witness

if TYPE_CHECKING:
    import redis.asyncio as aioredis

    from turinglab.arena.cluster.shared_rounds import SharedRounds
    from turinglab.arena.core.modes import ArenaMode
    from turinglab.arena.core.rounds import RoundBook

CLAIM_TRIES = 4  # candidates taken meanwhile by another process: look again, a few times
GONE = "\0gone"  # the caller was taken as a witness (or waits elsewhere) meanwhile


class Pairs:
    """One process's pairing scripts over one arena namespace."""

    def __init__(self, client: aioredis.Redis, books: SharedRounds, process: str) -> None:
        self.redis = client
        self.books = books
        self.prefix = books.prefix
        self.process = process
        names = ("JOIN", "WITHDRAW", "ADOPT", "CLAIM", "CONFIRM", "RELEASE", "LET_GO", "TAKE")
        self._scripts = {n: client.register_script(getattr(lua, n)) for n in (*names, "SEATED")}

    async def script(self, name: str, keys: list[str], args: list[Any]) -> Any:
        return await self._scripts[name](keys=keys, args=args)

    @property
    def taken(self) -> str:
        """How a person's `blind-at` starts while this process holds them as a witness."""
        return f"taken:{self.process}@"

    def entry(self, pid: str) -> str:
        return f"{pid}|{self.process}"

    def offer_set(self, mode: ArenaMode) -> str:
        return f"{self.prefix}blind:{mode.name}"

    def at(self, pid: str) -> str:
        """Which process `pid` waits on: the one that may seat them."""
        return f"{self.prefix}blind-at:{pid}"

    async def offered(
        self, run: str, pid: str, mode: ArenaMode, book: RoundBook
    ) -> tuple[list[Offered], dict[str, str]]:
        """Who is offered for `mode` and may witness for `pid`, oldest first, with each one's
        entry; their counts read from the shared book."""
        entries = [str(e) for e in await self.redis.zrange(self.offer_set(mode), 0, -1)]
        others = [(e.split("|", 1)[0], e) for e in entries if not e.startswith(pid + "|")]
        if not others:
            return [], {}
        pipe = self.redis.pipeline(transaction=False)
        for other, _ in others:
            pipe.hmget(self.books.book_key(run, other), ["i", "w", "x"])
            pipe.sismember(f"{self.prefix}met:{pid}", other)
        found = await pipe.execute()
        qi, qw = book.quota["interrogator"], book.quota["witness"]
        offered, entry_of = [], {}
        for k, (other, entry) in enumerate(others):
            i, w, x = (int(v or 0) for v in found[2 * k])
            if found[2 * k + 1] or w + x >= qw:  # met them, or owes no witness round
                continue
            offered.append(Offered(other, only_witness=i >= qi))
            entry_of[other] = entry
        return offered, entry_of

    async def claim(
        self, run: str, pid: str, mode: ArenaMode, book: RoundBook, *, anyone: bool
    ) -> str | None:
        """Hold the witness the rule chooses for `pid`: their pid; None: nobody free; GONE:
        `pid` was taken as a witness, or waits elsewhere now."""
        for _ in range(CLAIM_TRIES):
            offered, entry_of = await self.offered(run, pid, mode, book)
            found = choose_witness(offered, anyone=anyone)
            if found is None:
                return None
            outcome = await self.script(
                "CLAIM",
                [self.at(pid), self.offer_set(mode), self.at(found), f"{self.prefix}met:{pid}"],
                [
                    self.process,
                    self.entry(pid),
                    entry_of[found],
                    found,
                    f"{self.prefix}alive:",
                    self.books.met_ttl_s,
                ],
            )
            if outcome == "held":
                return found
            if outcome == "gone":
                return GONE
        return None

    async def confirm(self, run: str, pid: str, witness: str, book: RoundBook) -> str:
        """Seat-time check of the held `witness`, their rounds counted: 'paired', 'lost' (they
        left) or 'gone' (`pid` waits here no more)."""
        outcome, *counts = await self.script(
            "CONFIRM",
            [
                self.at(pid),
                self.at(witness),
                self.books.book_key(run, pid),
                self.books.book_key(run, witness),
            ],
            [
                self.process,
                self.taken,
                f"{self.prefix}met:",
                pid,
                witness,
                self.books.met_ttl_s,
                BOOK_TTL_S,
            ],
        )
        if outcome == "paired":
            book.mirror(pid, int(counts[0]), int(counts[1]))
            book.mirror(witness, int(counts[2]), int(counts[3]))
        return str(outcome)

    async def release(self, witness: str, mode: ArenaMode) -> None:
        """Give a held witness back to their own process, offered again."""
        key = self.offer_set(mode)
        args = [self.taken, self.books.met_ttl_s, witness]
        await self.script("RELEASE", [self.at(witness), key, key + ":n"], args)

    async def take(
        self, run: str, pid: str, mode: ArenaMode, book: RoundBook, *, offered: bool
    ) -> tuple[str, str | None]:
        """Three-party: TAKE the oldest offered person who may witness for `pid`, counted and
        marked taken: ('paired', them), ('none', None) or ('gone', None)."""
        found = await self.script(
            "TAKE",
            [
                self.offer_set(mode),
                self.books.book_key(run, pid),
                self.at(pid),
                self.offer_set(mode) + ":n",
            ],
            [
                self.entry(pid),
                pid,
                self.books.book_key(run, ""),
                f"{self.prefix}met:",
                book.quota["interrogator"],
                book.quota["witness"],
                self.books.met_ttl_s,
                BOOK_TTL_S,
                f"{self.prefix}alive:",
                "1" if offered else "0",
                f"{self.prefix}blind-at:",
                self.process,
            ],
        )
        outcome, entry, ci, cw, oi, ow = found
        if outcome == "gone":
            return "gone", None
        book.mirror(pid, int(ci), int(cw))
        if outcome != "paired":
            return "none", None
        partner = str(entry).split("|", 1)[0]
        book.mirror(partner, int(oi), int(ow))
        return "paired", partner

    async def seated(self, *pids: str) -> None:
        """Three-party people this process took are seated (until they join again)."""
        keys = [self.at(p) for p in pids]
        await self.script("SEATED", keys, [self.process, self.books.met_ttl_s])

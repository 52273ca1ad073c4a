"""Writes are never silently lost, never duplicated, and never made by a stale owner.

The writer against a PostgreSQL it cannot reach (a real TCP proxy in front of the real server):
it retries and then commits everything, or after its bound fails every write loudly. One bad
row in a group commit fails alone. A live game's writes are fenced by its ownership epoch: a
writer whose game was claimed by a takeover writes nothing more, a takeover waits for a commit
in flight, and a game with a failed write is still taken over from what was committed.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from concurrent.futures import Future
from typing import Any

import pytest
from sqlalchemy import func, select

from turinglab.games.table import TranscriptMessage
from turinglab.store.database import GameStart, SeatRecord, Store
from turinglab.store.fencing import Fenced, OutOfSequence, claim_games, held_games, hold
from turinglab.store.schema import games, messages
from turinglab.store.writer import StoreWriter, WriteFailed
from turinglab.testing.tcp_proxy import TcpProxy

RUN = "fencing-run"


def _store_with_games(location: str, n: int, worker: str = "one") -> tuple[Store, list[int]]:
    store = Store(location)
    store.create_run(RUN, "fencing", "arena", {}, {}, [])
    start = GameStart(RUN, None, 1, "chat", time.time(), [SeatRecord("a", "x")], None, worker)
    with store.writing() as conn:
        ids = store.start_games(conn, [start] * n)
    return store, ids


def _row(game_id: int, seq: int, text: str | None = None) -> dict[str, Any]:
    said = TranscriptMessage(seq, "a", text or f"m{seq}", ("a",), "main", time.time())
    return Store.message_row(game_id, said)


def _stored(store: Store) -> list[tuple[int, int, str]]:
    with store.engine.connect() as conn:
        query = select(messages.c.game_id, messages.c.seq, messages.c.text)
        return sorted(tuple(r) for r in conn.execute(query.order_by(messages.c.id)))


def _wait(futures: list[Future[Any]], timeout: float = 60.0) -> list[BaseException | None]:
    return [f.exception(timeout) for f in futures]


@pytest.mark.database
async def test_the_writer_rides_out_a_refused_database_and_loses_nothing(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    proxy = TcpProxy("127.0.0.1", 5432)
    await proxy.start()
    via_proxy = postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    store, ids = await asyncio.to_thread(_store_with_games, via_proxy, 3)  # the proxy runs here
    writer = StoreWriter(store, retry_for_s=60.0)
    try:
        await proxy.refuse()
        proxy.cut()  # the pooled connections die with the network
        caplog.set_level(logging.WARNING, "turinglab.store.writer")
        futures = [writer.add_message(_row(g, s)) for s in range(20) for g in ids]
        for _ in range(1200):  # retried, with backoff, while nothing gets through
            if writer.failures >= 3:
                break
            await asyncio.sleep(0.05)
        assert not any(f.done() for f in futures)
        await proxy.accept()
        assert await asyncio.to_thread(_wait, futures) == [None] * len(futures)
    finally:
        await asyncio.to_thread(writer.close)
        await proxy.stop()
    assert writer.error is None and writer.failed_writes == 0
    assert len(_stored(Store(postgres_url))) == 60  # each once (a unique index says so too)
    failures = [r for r in caplog.records if "store write failed at" in r.getMessage()]
    assert len(failures) == writer.failures >= 3 and "will retry" in failures[0].getMessage()


@pytest.mark.database
async def test_past_its_bound_the_writer_fails_every_write_loudly(
    postgres_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    proxy = TcpProxy("127.0.0.1", 5432)
    await proxy.start()
    via_proxy = postgres_url.replace("127.0.0.1:5432", f"127.0.0.1:{proxy.port}")
    store, (gid,) = await asyncio.to_thread(_store_with_games, via_proxy, 1)
    writer = StoreWriter(store, retry_for_s=1.0)
    try:
        await proxy.refuse()
        proxy.cut()
        futures = [writer.add_owned_message(_row(gid, s), 0) for s in range(5)]
        errors = await asyncio.to_thread(_wait, futures)
    finally:
        await asyncio.to_thread(writer.close)
        await proxy.stop()
    assert all(isinstance(e, WriteFailed) for e in errors)
    assert writer.failed_writes == 5 and writer.failures >= 2
    assert any("5 writes NOT saved" in r.getMessage() for r in caplog.records)
    assert _stored(Store(postgres_url)) == []


def test_one_bad_row_fails_alone_and_every_other_game_s_rows_land(store_location: str) -> None:
    store, (a, b, c) = _store_with_games(store_location, 3)
    with store.writing() as conn:
        store.add_messages(conn, [_row(a, 0)])
    writer = StoreWriter(store, min_commit_interval_s=0.2)  # one group commit for all below
    try:
        writer.submit(lambda conn: None).result(30)  # the next commit waits out the interval
        good = [writer.add_message(_row(g, s)) for g in (b, c) for s in range(5)]
        bad = writer.add_message(_row(a, 0, "said twice"))  # the unique (game_id, seq) refuses
        late = [writer.add_message(_row(a, 1))]
        assert _wait([*good, *late]) == [None] * 11
        assert bad.exception(30) is not None
    finally:
        writer.close()
    assert writer.error is not None and writer.failed_writes == 1
    assert writer.transactions >= 3  # the group, then its halves
    rows = _stored(store)
    assert len(rows) == 12 and (a, 0, "m0") in rows and (a, 0, "said twice") not in rows


def test_a_writer_whose_game_was_taken_over_writes_nothing_more(store_location: str) -> None:
    store, (gid,) = _store_with_games(store_location, 1, worker="one")
    writer = StoreWriter(store)
    try:
        first = [writer.add_owned_message(_row(gid, s), 0) for s in range(3)]
        assert _wait(first) == [None, None, None]
        with store.writing() as conn:  # process "two" claims the game: the epoch moves on
            (claimed,) = claim_games(conn, RUN, "one", "two")
        assert claimed.epoch == 1
        stale = writer.add_owned_message(_row(gid, 3, "from the stale owner"), 0)
        assert isinstance(stale.exception(30), Fenced)
        fresh = writer.add_owned_message(_row(gid, 3, "from the new owner"), 1)
        assert fresh.exception(30) is None

        def stale_end(conn: Any) -> None:
            hold(conn, gid, 0)
            conn.execute(games.update().where(games.c.id == gid).values(status="finished"))

        assert isinstance(writer.submit(stale_end).exception(30), Fenced)
    finally:
        writer.close()
    assert [t for _, _, t in _stored(store)] == ["m0", "m1", "m2", "from the new owner"]
    with store.engine.connect() as conn:
        assert conn.execute(select(games.c.status).where(games.c.id == gid)).scalar() == "playing"


def test_message_rows_continue_their_game_exactly(store_location: str) -> None:
    """No hole and no second row under a seq; a retried commit that did land counts as done."""
    store, (gid,) = _store_with_games(store_location, 1)
    writer = StoreWriter(store)
    try:
        assert _wait([writer.add_owned_message(_row(gid, s), 0) for s in range(2)]) == [None] * 2
        hole = writer.add_owned_message(_row(gid, 3), 0)
        assert isinstance(hole.exception(30), OutOfSequence)
        again = writer.add_owned_message(_row(gid, 1), 0)  # the same words: already stored
        other = writer.add_owned_message(_row(gid, 1, "other words"), 0)
        assert again.exception(30) is None
        assert isinstance(other.exception(30), OutOfSequence)
    finally:
        writer.close()
    assert _stored(store) == [(gid, 0, "m0"), (gid, 1, "m1")]


@pytest.mark.database
def test_a_takeover_waits_for_a_commit_in_flight(postgres_url: str) -> None:
    """The owner's guard locks the game row: a claim made meanwhile waits for the commit, so
    it reads the owner's last message, and the owner's next write is refused."""
    store, (gid,) = _store_with_games(postgres_url, 1, worker="one")
    claimed: list[Any] = []
    with store.writing() as conn:
        assert held_games(conn, {gid: 0}) == {gid: 0}
        store.add_messages(conn, [_row(gid, 0, "last words of the owner")])

        def claim() -> None:
            with store.writing() as other:
                claimed.extend(claim_games(other, RUN, "one", "two"))
                said = other.execute(
                    select(func.count()).select_from(messages).where(messages.c.game_id == gid)
                ).scalar()
                claimed.append(said)

        thief = threading.Thread(target=claim)
        thief.start()
        thief.join(1.0)
        assert thief.is_alive() and claimed == []  # blocked on the owner's lock
    thief.join(30)
    (c, said) = claimed
    assert c.epoch == 1 and said == 1
    with store.writing() as conn:
        assert held_games(conn, {gid: 0}) == {}


def test_a_game_with_a_failed_write_is_taken_over_from_what_was_committed(
    store_location: str,
) -> None:
    from turinglab.arena.core.store_bridge import ArenaStore

    store, (gid,) = _store_with_games(store_location, 1, worker="one")
    writer = StoreWriter(store)
    try:
        assert _wait([writer.add_owned_message(_row(gid, s), 0) for s in range(2)]) == [None] * 2
        lost = writer.add_owned_message(_row(gid, 3), 0)  # seq 2 never arrived
        assert lost.exception(30) is not None
    finally:
        writer.close()
    with store.writing() as conn:
        setup = {"arena_game": "g-1", "mode": "chat", "trial": _trial_json()}
        conn.execute(games.update().where(games.c.id == gid).values(setup=setup))
    bridge = ArenaStore.__new__(ArenaStore)  # only its reading side: no run, no writer
    bridge.store, bridge.run_id, bridge.worker = store, RUN, "two"
    (stored,) = bridge.take_over("one")
    assert stored.epoch == 1 and [m.seq for m in stored.messages] == [0, 1]


def _trial_json() -> dict[str, Any]:
    from turinglab.games.spec import TrialSpec

    return TrialSpec(0, "k", "chat", 1, {"a": "x"}, {}).to_json()


def test_a_store_with_duplicate_seqs_upgrades_in_place_keeping_every_row(
    store_location: str,
) -> None:
    """Written before 0004 by a stale owner: the first row of each seq stays, the later one is
    kept in its game's setup, and the game is flagged."""
    from alembic import command

    from turinglab.store import migrations

    store, (gid, other) = _store_with_games(store_location, 2)
    with store.writing() as conn:
        command.downgrade(migrations._config(conn), "0003_media")
    with store.writing() as conn:
        store.add_messages(conn, [_row(gid, 0), _row(gid, 1), _row(other, 0)])
        store.add_messages(conn, [_row(gid, 1, "the stale owner's")])
    store.close()
    upgraded = Store(store_location)
    with upgraded.engine.connect() as conn:
        rows = {r.id: r for r in conn.execute(select(games))}
    assert _stored(upgraded) == [(gid, 0, "m0"), (gid, 1, "m1"), (other, 0, "m0")]
    assert rows[gid].flags == ["store: duplicate messages set aside (0004)"]
    (aside,) = rows[gid].setup["duplicate_messages"]
    assert aside["seq"] == 1 and aside["text"] == "the stale owner's"
    assert rows[other].flags == [] and "duplicate_messages" not in rows[other].setup
    assert rows[gid].owner_epoch == 0


@pytest.mark.database
def test_a_claim_ends_the_sessions_of_a_process_paused_mid_transaction(postgres_url: str) -> None:
    """A paused owner may hold its game's row lock inside a transaction indefinitely: the
    claimant ends that process's sessions (named after it) and claims at once; the paused
    owner's transaction is rolled back, and its next write is refused."""
    from turinglab.arena.core.store_bridge import ArenaStore

    owner, (gid,) = _store_with_games(postgres_url, 1, worker="one")
    owner.name_sessions("one")
    with owner.writing() as conn:
        setup = {"arena_game": "g-1", "mode": "chat", "trial": _trial_json()}
        conn.execute(games.update().where(games.c.id == gid).values(setup=setup))
    paused = owner.engine.connect()
    paused.begin()
    assert held_games(paused, {gid: 0}) == {gid: 0}  # locked, and then nothing: "paused"
    owner.add_messages(paused, [_row(gid, 0, "never committed")])
    claimant = Store(postgres_url)
    bridge = ArenaStore.__new__(ArenaStore)
    bridge.store, bridge.run_id, bridge.worker = claimant, RUN, "two"
    started = time.monotonic()
    (stored,) = bridge.take_over("one")
    assert time.monotonic() - started < 4  # not the lock timeout, nor the idle timeout
    assert stored.epoch == 1 and stored.messages == []
    with pytest.raises(Exception, match=r"terminat|closed|server"):
        paused.commit()
    paused.close()
    writer = StoreWriter(owner)
    try:
        late = writer.add_owned_message(_row(gid, 0, "after waking up"), 0)
        assert isinstance(late.exception(30), Fenced)
    finally:
        writer.close()
    assert _stored(claimant) == []

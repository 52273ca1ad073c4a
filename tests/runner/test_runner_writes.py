"""The runner's cheaper write and call paths keep their promises.

Message rows queued without a future are still written by the group commit, and one the store
refuses still fails the run loudly (nothing is dropped in silence). Agents on one endpoint share
one connection pool, which stays open while any of them still uses it.
"""

from __future__ import annotations

import time

from sqlalchemy import select

from turinglab.agents.base import CallContext, ChatMessage
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.games.table import TranscriptMessage
from turinglab.store.database import GameStart, SeatRecord, Store
from turinglab.store.schema import messages
from turinglab.store.writer import StoreWriter
from turinglab.testing.fake_openai import FakeOpenAIServer

RUN = "writes-run"


def _row(game_id: int, seq: int, text: str) -> dict[str, object]:
    said = TranscriptMessage(seq, "a", text, ("a",), "main", time.time())
    return Store.message_row(game_id, said)


def test_rows_queued_without_a_future_land_and_a_refused_one_is_reported(
    store_location: str,
) -> None:
    store = Store(store_location)
    store.create_run(RUN, "writes", "arena", {}, {}, [])
    start = GameStart(RUN, None, 1, "chat", time.time(), [SeatRecord("a", "x")], None, "w")
    with store.writing() as conn:
        a, b = store.start_games(conn, [start, start])
    writer = StoreWriter(store, min_commit_interval_s=0.2)  # the rows below share commits
    try:
        writer.submit(lambda conn: None).result(30)
        for seq in range(5):
            writer.add_message_nowait(_row(a, seq, f"a{seq}"))
        writer.add_message_nowait(_row(b, 0, "b0"))
        writer.add_message_nowait(_row(b, 0, "said twice"))  # unique (game_id, seq) refuses
        writer.add_message_nowait(_row(b, 1, "b1"))
    finally:
        writer.close()  # writes everything queued
    # Nobody awaited these rows: the refusal is kept where the runner looks at the end.
    assert writer.error is not None and writer.failed_writes == 1
    with store.engine.connect() as conn:
        query = select(messages.c.game_id, messages.c.seq, messages.c.text)
        stored = sorted(tuple(r) for r in conn.execute(query))
    assert stored == [*((a, s, f"a{s}") for s in range(5)), (b, 0, "b0"), (b, 1, "b1")]


async def test_agents_on_one_endpoint_share_one_connection_pool(
    fake_server: FakeOpenAIServer,
) -> None:
    assert fake_server.base_url is not None
    one = OpenAIChatAgent(name="one", base_url=fake_server.base_url, model="m1", api_key="k1")
    two = OpenAIChatAgent(name="two", base_url=fake_server.base_url, model="m2", api_key="k2")
    history, ctx = [ChatMessage("user", "Hello?")], CallContext(seed=1)
    try:
        await one.reply(history, ctx)
        await two.reply(history, ctx)
        assert one._session is not None and two._session is not None
        pool = one._session.connector
        assert pool is two._session.connector and pool is not None
        assert fake_server.last_request is not None
        assert fake_server.last_request["model"] == "m2"  # each agent's own request
        await one.aclose()
        assert not pool.closed  # `two` still uses it
        assert (await two.reply(history, ctx)).text
    finally:
        await one.aclose()
        await two.aclose()
    assert pool.closed

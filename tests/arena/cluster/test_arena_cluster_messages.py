"""The messages between cluster processes (cluster_messages.py): each kind reads back as it was
sent, a relayed frame spliced by hand parses as the model does, and a message of a kind no
process sends is logged once and dropped by a running listener, which goes on with the next."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from arena_fixtures import make_setup
from test_arena_multiprocess import alive_namespace
from turinglab.arena.cluster import cluster_messages
from turinglab.arena.cluster.cluster import Cluster
from turinglab.arena.cluster.cluster_messages import (
    AdminEnd,
    Gone,
    Hello,
    Here,
    Input,
    Relayed,
    encode,
    own_prefix,
    parse_message,
    relayed_payload,
)
from turinglab.arena.core import frames as F
from turinglab.arena.core.resume import ResumePoint

SENT = [
    Hello(pid="p-1", sender="arena/ab", resume=ResumePoint("g-1", "s-1", 7)),
    Hello(pid="p-1", sender="arena/ab"),
    Here(pid="p-1", sender="arena/ab"),
    Gone(pid="p-1", sender="arena/ab"),
    Input(pid="p-1", raw='{"type": "leave"}', sender="arena/ab"),
    Input(pid="p-1", raw='{"type": "leave"}'),
    AdminEnd(game="g-1", reason="test over"),
]


@pytest.mark.parametrize("message", SENT, ids=lambda m: m.type)
def test_each_message_reads_back_as_sent(message: object) -> None:
    assert parse_message(encode(message)) == message  # type: ignore[arg-type]


def test_a_spliced_relayed_frame_parses_and_is_known_as_its_senders_own() -> None:
    frame = F.Status(state="no-match", waited_s=3.0)
    payload = relayed_payload(own_prefix("arena/ab"), "p-1", 12.5, frame.model_dump_json())
    assert payload.startswith(own_prefix("arena/ab"))
    assert not payload.startswith(own_prefix("arena/cd"))
    assert parse_message(payload) == Relayed(
        origin="arena/ab", pid="p-1", sent_at=12.5, frame=json.loads(frame.model_dump_json())
    )


def test_an_unknown_message_is_logged_once_and_dropped(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cluster_messages, "_unknown_logged", set())  # none logged before
    with caplog.at_level(logging.WARNING, logger="turinglab.arena.cluster.cluster_messages"):
        for raw in ('{"type": "no-such-kind", "p": "x"}', '{"type": "no-such-kind"}', "[1"):
            assert parse_message(raw) is None
        assert parse_message('{"type": "hello", "pid": "p-1"}') is None  # no sender
    said = [r.getMessage() for r in caplog.records]
    assert len([s for s in said if "no-such-kind" in s]) == 1, said
    assert len(said) == 3, said  # once per kind: unknown, not JSON, a hello without a sender


async def test_the_listener_drops_what_it_does_not_know_and_goes_on() -> None:
    async with alive_namespace() as (client, prefix):
        cluster = Cluster(make_setup(), "redis://127.0.0.1:6379/0", prefix.split(":")[2])
        arena = cluster.arena
        await cluster.start()
        try:
            person = arena.sessions.new()
            cluster.holders[person.id] = {"arena/elsewhere"}
            channel = f"{prefix}proc:{cluster.me}"
            for raw in ("not json", '{"type": "no-such-kind"}', '{"pid": "x"}'):
                await client.publish(channel, raw)
            await client.publish(channel, encode(Gone(pid=person.id, sender="arena/elsewhere")))
            for _ in range(200):
                if not cluster.holders[person.id]:
                    break
                await asyncio.sleep(0.05)
            assert cluster.holders[person.id] == set(), "the message after the unknown ones"
            assert cluster.listening
        finally:
            await cluster.stop()

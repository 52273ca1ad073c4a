"""The shared round book's scripts (arena/cluster/shared_rounds.py) against a real Redis: whom
TAKE_OR_WAIT pairs, which role it gives, what it counts; the AI witness groups' shared cycle.
Two SharedRounds objects over one namespace stand for two arena processes, P1 and P2, each
with its heartbeat key (cluster.py); a queued person whose process has none is never paired."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis

from test_arena_multiprocess import alive_namespace
from turinglab.arena.cluster.shared_rounds import SharedRounds
from turinglab.arena.core.rounds import RoundBook

RUN = "run-1"
MODE = "three-party"


@pytest.fixture
async def client() -> AsyncIterator[tuple[aioredis.Redis, str]]:
    async with alive_namespace("P1", "P2") as made:
        yield made


def process(client: tuple[aioredis.Redis, str], rounds: int = 2, seed: int = 0) -> tuple:
    """A process's view: its SharedRounds and its own (mirror) RoundBook."""
    redis, prefix = client
    return SharedRounds(redis, prefix, met_ttl_s=60), RoundBook(rounds, random.Random(seed))


async def counts(client: tuple[aioredis.Redis, str], pid: str) -> dict[str, str]:
    redis, prefix = client
    return dict(await redis.hgetall(f"{prefix}book:{RUN}:{pid}"))


async def queue(client: tuple[aioredis.Redis, str]) -> list[str]:
    redis, prefix = client
    return list(await redis.lrange(f"{prefix}queue:{MODE}", 0, -1))


async def test_pairs_across_processes_and_counts_both_books(client: tuple) -> None:
    (one, book1), (two, book2) = process(client), process(client)
    assert (await one.take_or_wait(RUN, MODE, "a", "P1", book1)).outcome == "waiting"
    assert await queue(client) == ["a|P1"]
    taken = await two.take_or_wait(RUN, MODE, "b", "P2", book2)
    assert taken.outcome == "paired" and taken.partner == "a|P1" and taken.partner_id == "a"
    assert await queue(client) == []
    judge, witness = ("b", "a") if taken.role == "interrogator" else ("a", "b")
    assert await counts(client, judge) == {"i": "1", "w": "0"}
    assert await counts(client, witness) == {"i": "0", "w": "1"}
    # The taking process mirrors both books; the other reads a's when asked.
    assert book2.played("a") == book2.played("b") == 1
    assert book1.played("a") == 0
    await one.load(RUN, "a", book1)
    assert book1.progress("a").interrogated == (1 if judge == "a" else 0)
    redis, prefix = client
    assert await redis.smembers(f"{prefix}met:a") == {"b"}
    assert await redis.smembers(f"{prefix}met:b") == {"a"}


async def test_never_pairs_two_who_met_nor_against_the_quota(client: tuple) -> None:
    (one, book), (two, book2) = process(client), process(client)
    await one.take_or_wait(RUN, MODE, "a", "P1", book)
    first = await two.take_or_wait(RUN, MODE, "b", "P2", book2)
    # The second round: they have met, so both wait, each once in the queue.
    assert (await one.take_or_wait(RUN, MODE, "a", "P1", book)).outcome == "waiting"
    assert (await two.take_or_wait(RUN, MODE, "b", "P2", book2)).outcome == "waiting"
    assert await queue(client) == ["a|P1", "b|P2"]
    # c has interrogated once, their quota in 2 rounds: c may only witness.
    redis, prefix = client
    await redis.hset(f"{prefix}book:{RUN}:c", mapping={"i": 1, "w": 0})
    judge = "b" if first.role == "interrogator" else "a"
    witness = "a" if judge == "b" else "b"
    taken = await one.take_or_wait(RUN, MODE, "c", "P1", book)
    # c must witness; the only one who may still interrogate is the first round's witness.
    assert taken.outcome == "paired" and taken.role == "witness"
    assert taken.partner_id == witness
    assert await queue(client) == [f"{judge}|{'P2' if judge == 'b' else 'P1'}"]
    assert await counts(client, "c") == {"i": "1", "w": "1"}
    assert await counts(client, witness) == {"i": "1", "w": "1"}


async def test_who_has_played_all_rounds_is_done_and_not_queued(client: tuple) -> None:
    (one, book) = process(client)
    redis, prefix = client
    await redis.hset(f"{prefix}book:{RUN}:a", mapping={"i": 1, "w": 1})
    await redis.rpush(f"{prefix}queue:{MODE}", "a|P1")  # a stale entry goes too
    assert (await one.take_or_wait(RUN, MODE, "a", "P1", book)).outcome == "done"
    assert await queue(client) == []
    assert book.done("a")
    # A fresh person does not meet them either: there is nobody to take.
    assert (await one.take_or_wait(RUN, MODE, "b", "P1", book)).outcome == "waiting"


async def test_when_both_ways_fit_either_role_comes_up(client: tuple) -> None:
    roles = set()
    for seed in range(8):
        (one, book) = process(client, seed=seed)
        a, b = f"a{seed}", f"b{seed}"
        await one.take_or_wait(RUN, MODE, a, "P1", book)
        taken = await one.take_or_wait(RUN, MODE, b, "P1", book)
        roles.add(taken.role)
    assert roles == {"interrogator", "witness"}


async def test_count_alone_adds_an_interrogator_round(client: tuple) -> None:
    (one, book) = process(client)
    await one.count_alone(RUN, "a", book)
    assert await counts(client, "a") == {"i": "1", "w": "0"}  # a new book, seeded empty
    assert book.progress("a").interrogated == 1 and not book.may("a", "interrogator")


async def test_groups_cycle_per_interrogator_whichever_process_draws(client: tuple) -> None:
    (one, book1), (two, book2) = process(client, seed=1), process(client, seed=2)
    groups = ["G1", "G2", "G3", "G4"]
    drawn: list[str] = []
    for k in range(5):  # alternate processes; one group a game, then two at once
        shared, book = (one, book1) if k % 2 == 0 else (two, book2)
        drawn += await shared.draw_groups(RUN, "a", MODE, groups, 1 if k < 4 else 2, book.rng)
    assert sorted(drawn[:4]) == groups  # every group once in the first cycle
    assert len(set(drawn[4:])) == 2  # the next cycle, begun
    more = await one.draw_groups(RUN, "a", MODE, groups, 2, book1.rng)
    assert sorted(drawn[4:] + more) == groups
    # Another interrogator's cycle is their own, and another mode's too.
    assert len(await one.draw_groups(RUN, "b", MODE, groups, 4, book1.rng)) == 4
    assert sorted(await one.draw_groups(RUN, "a", "two-party", groups, 4, book1.rng)) == groups
    assert await one.draw_groups(RUN, "a", MODE, groups, 0, book1.rng) == []


async def test_a_person_queued_by_a_process_that_died_is_dropped_not_paired(client: tuple) -> None:
    redis, prefix = client
    (one, book1), (two, book2) = process(client), process(client)
    assert (await one.take_or_wait(RUN, MODE, "a", "P1", book1)).outcome == "waiting"
    await redis.delete(f"{prefix}alive:P1")  # P1 died: its heartbeat expired
    assert (await two.take_or_wait(RUN, MODE, "b", "P2", book2)).outcome == "waiting"
    assert await queue(client) == ["b|P2"]  # a's entry went with its process
    assert await counts(client, "a") == await counts(client, "b") == {"i": "0", "w": "0"}


async def test_the_groups_of_a_game_that_was_no_round_are_drawn_next(client: tuple) -> None:
    """Issue 31: after a flagged game the group was not met again, so a person met ELIZA twice
    and SmolLM2 never. Given back, the group is the interrogator's next, in any process."""
    (one, book1), (two, book2) = process(client), process(client)
    groups = ["ELIZA", "SMOLLM2-PERSONA", "GPT-PERSONA"]
    first = await one.draw_groups(RUN, "a", MODE, groups, 1, book1.rng)
    await one.give_groups_back(RUN, "a", MODE, first)  # its game was flagged
    again = await two.draw_groups(RUN, "a", MODE, groups, 1, book2.rng)
    assert again == first
    rest = await one.draw_groups(RUN, "a", MODE, groups, 2, book1.rng)
    assert sorted(again + rest) == sorted(groups)  # the cycle stays whole: each group once
    # a group still waiting in the cycle is not put there twice
    x = await one.draw_groups(RUN, "a", MODE, groups, 1, book1.rng)
    left = sorted(set(groups) - set(x))
    await two.give_groups_back(RUN, "a", MODE, left[:1])
    assert sorted(await one.draw_groups(RUN, "a", MODE, groups, 2, book1.rng)) == left
    await one.give_groups_back(RUN, "a", MODE, [])  # nothing to give back: nothing happens

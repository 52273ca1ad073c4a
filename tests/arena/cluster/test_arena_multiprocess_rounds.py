"""The study's rounds across two arena server processes (PostgreSQL under them, Redis between):
four people, two rounds each (one as interrogator, one as witness), each person moving to the
other process between rounds, the first round's pairs across processes, never the same two
people twice; then all are sent to the exit survey, wherever they connect."""

from __future__ import annotations

from collections import Counter

import pytest

from arena_fixtures import Person
from test_arena_multiprocess import SERVER, arena_processes

ROUNDS = 2


def server(**settings: object) -> str:
    """The multiprocess test's server script with other study settings."""
    given = ", ".join(f"{k}={v!r}" for k, v in settings.items())
    script = SERVER.replace("make_setup(ai_after_s=600)", f"make_setup({given})")
    assert script != SERVER
    return script


async def play_two_party(judge: Person, witness: Person) -> None:
    await judge.send(type="message", channel="A", text="are you a person?")
    heard = await witness.until("message", sender="them")
    await witness.send(type="message", channel=heard["channel"], text="yes, tired though")
    await judge.until("message", sender="them")
    await judge.send(type="end")  # a verdict only after the end
    await judge.send(type="verdict", choice="human", confidence=60, reason="tired")
    await judge.until("reveal")
    await witness.until("reveal")


async def play_round(people: dict[str, Person]) -> list[tuple[str, str, int]]:
    """Everyone joins the two-party mode; returns (interrogator, witness, round shown) per game."""
    snapshots: dict[str, dict] = {}
    for name, person in people.items():
        await person.send(type="join", mode="two-party", consent=True)
        frame = await person.until_any(("game", "status"))
        # Known race (issue 15 notes; reproduced about 1 in 20 runs under a CPU hog): a process
        # sends a person's frames to their socket there *and* publishes them for sockets
        # elsewhere (it cannot know there are none). Under load that publish can leave its
        # Redis stream after the person has moved to the other process, which relays the old
        # `idle` after their join. Skipped here; the frames that decide the round follow it.
        while frame["type"] == "status" and frame["state"] == "idle":
            frame = await person.until_any(("game", "status"))
        if frame["type"] == "status":
            assert frame["state"] == "waiting", (name, frame)
        else:
            snapshots[name] = frame
    for name, person in people.items():  # those who waited have been taken by now
        if name not in snapshots:
            snapshots[name] = await person.until("game")
    games: dict[str, dict[str, str]] = {}
    for name, snap in snapshots.items():
        games.setdefault(snap["game"], {})[snap["role"]] = name
        assert snap["rounds"]["total"] == ROUNDS
    assert len(games) == len(people) // 2, games
    played = []
    for roles in games.values():
        judge, witness = roles["interrogator"], roles["witness"]
        await play_two_party(people[judge], people[witness])
        shown = snapshots[judge]["rounds"]["played"]
        assert snapshots[witness]["rounds"]["played"] == shown
        played.append((judge, witness, shown))
    for person in people.values():
        await person.send(type="leave")
    return played


@pytest.mark.database
async def test_rounds_and_roles_hold_across_processes(postgres_url: str) -> None:
    names = ["a", "b", "c", "d"]
    people: dict[str, Person] = {}
    async with arena_processes(server(ai_after_s=600, rounds=ROUNDS), postgres_url) as arena:
        home = {n: arena.bases[k % 2] for k, n in enumerate(names)}  # a, c on 0; b, d on 1

        def other(base: str) -> str:
            return arena.bases[1] if base == arena.bases[0] else arena.bases[0]

        try:
            games = []
            for round_no in range(ROUNDS):
                for name in names:  # each round on the other process than the last
                    if name not in people:
                        people[name] = Person(home[name])
                    person = people[name]
                    await person.drop()  # the same person (cookie), now on another process
                    person.base = home[name] if round_no % 2 == 0 else other(home[name])
                    status = await person.connect()
                    assert status["rounds"] == {"played": round_no, "total": ROUNDS}
                for judge, witness, shown in await play_round(people):
                    assert shown == round_no + 1  # "round 1 of 2", then "round 2 of 2"
                    games.append((judge, witness))
                    # The first round pairs people queued on different processes (join order).
                    assert round_no > 0 or people[judge].base != people[witness].base
                for person in people.values():
                    state = (await person.until("status"))["state"]
                    assert state == ("idle" if round_no < ROUNDS - 1 else "rounds-done")
            # Each person: one round in each role, never the same partner twice.
            roles = Counter((j, "i") for j, _ in games) + Counter((w, "w") for _, w in games)
            assert all(roles[(n, "i")] == roles[(n, "w")] == 1 for n in names), roles
            pairs = {frozenset(game) for game in games}
            assert len(pairs) == len(games) == ROUNDS * len(names) // 2
            # Done everywhere: on either process, the count says so and a join gets no third game.
            for name, base in zip(names, arena.bases * 2, strict=True):
                person = people[name]
                await person.drop()
                person.base = base
                # Status, or the last game again where it was played (its reveal): 2 of 2 both.
                shown = await person.connect()
                assert shown["rounds"] == {"played": ROUNDS, "total": ROUNDS}, shown
                await person.send(type="join", mode="two-party", consent=True)
                assert (await person.until("status"))["state"] == "rounds-done"
        finally:
            for person in people.values():
                await person.close()


@pytest.mark.database
async def test_a_round_with_ai_only_counts_on_every_process(postgres_url: str) -> None:
    """Alone, a person meets an AI witness as interrogator; on the other process their
    interrogator quota (1 of 2 rounds) is known full, so alone they meet no AI again."""
    settings = server(ai_after_s=0, max_wait_s=2.5, rounds=ROUNDS)
    async with arena_processes(settings, postgres_url) as arena:
        person = Person(arena.bases[0])
        try:
            await person.connect()
            await person.send(type="join", mode="two-party", consent=True)
            snap = await person.until("game")
            assert snap["role"] == "interrogator" and snap["rounds"]["played"] == 1
            await person.send(type="message", channel="A", text="hello")
            await person.until("message", sender="them")
            await person.send(type="end")  # a verdict only after the end
            await person.send(type="verdict", choice="ai", confidence=80, reason="fast")
            await person.until("reveal")
            await person.send(type="leave")
            # Read here: a reply still on its way across Redis would reach the next connection.
            assert (await person.until("status"))["state"] == "idle"
            await person.drop()
            person.base = arena.bases[1]
            status = await person.connect()
            assert status["rounds"] == {"played": 1, "total": ROUNDS}
            await person.send(type="join", mode="two-party", consent=True)
            frame = await person.until_any(("game", "status"))
            assert frame.get("state") == "waiting", frame
            frame = await person.until_any(("game", "status"))
            assert frame.get("state") == "no-match", frame  # not a second AI game
        finally:
            await person.close()

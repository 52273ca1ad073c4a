"""Resume and idempotent inputs across processes, through a takeover (PostgreSQL + Redis).

Two server processes; a game of the engine's three-party kind (it resumes elsewhere) is owned
by process 1, with one person on each process. Both of the interrogator's questions are
shown (committed). Process 1 is SIGKILLed. In the takeover gap the witness answers: the input
goes to a process that no longer exists. Process 2 takes the game over and sends both people
a snapshot rebuilt from the store, on a new stream (the person from process 1 reconnected to
process 2 naming their old stream, which cannot be resumed there). The witness sends its
unanswered answer again and it is applied once; the interrogator re-sends a question it had
already seen shown (as a page that missed the frame would): it is acknowledged, not said
again. In the store every typed message is there exactly once.
"""

from __future__ import annotations

import signal
from typing import Any

import pytest

from arena_fixtures import Person
from test_arena_multiprocess import arena_processes
from test_arena_resume import reconnect
from test_arena_takeover import SERVER, _match, takeover_setup
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

pytestmark = [pytest.mark.database, pytest.mark.slow]


async def _snapshot(person: Person) -> dict[str, Any]:
    return await person.until("game", timeout=30)


async def test_inputs_sent_in_the_takeover_gap_are_applied_once(postgres_url: str) -> None:
    async with arena_processes(SERVER, postgres_url) as arena:
        one, two = arena.bases
        a, b = Person(two), Person(one)  # b is on process 1, which takes the match
        try:
            for p in (a, b):
                assert (await p.connect())["type"] == "status"
            judge, witness, game = await _match(a, b, "three-party")
            first = {p: next(f for f in p.frames if f["type"] == "game") for p in (a, b)}
            asked = len(first[judge]["messages"])
            questions = {"q-a": ("A", "tell me about your day"), "q-b": ("B", "and yours?")}
            for key, (ch, text) in questions.items():
                await judge.send(type="message", id=key, after=asked, channel=ch, text=text)
            for key in questions:
                await judge.until("message", ref=key)  # shown, so committed
            heard = await witness.until("message", sender="them")
            old_stream = {p: first[p]["stream"] for p in (a, b)}

            arena.procs[0].send_signal(signal.SIGKILL)
            arena.procs[0].wait(10)
            await b.drop()
            b.base = two
            # b comes back at process 2 naming where it was: its game is not there (yet).
            await reconnect(b, game=game, stream=old_stream[b], seq=first[b]["seq"])
            # The answer, written in the gap: its owner is gone, so it goes nowhere for now.
            after = len(first[witness]["messages"]) + 1
            answer = {"type": "message", "id": "w-1", "after": after, "channel": "A"}
            answer["text"] = f"fine, thanks ({heard['text'][:10]})"
            await witness.send(**answer)

            # Taken over: both are sent the game as rebuilt from the store, on a new stream.
            rebuilt = {p: await _snapshot(p) for p in (a, b)}
            for p, snap in rebuilt.items():
                assert snap["game"] == game and snap["stream"] != old_stream[p]
            # The page sends what was never answered again: applied now, once. (On a machine
            # so slow that the takeover beat the first send, that one was applied and this is
            # acknowledged: once either way.)
            await witness.send(**answer)
            assert (await witness.until("message", ref="w-1"))["text"] == answer["text"]
            await witness.send(**answer)  # and once more, say after another reconnect
            assert (await witness.until("ack"))["ref"] == "w-1"
            await judge.until("message", text=answer["text"])

            # A question the interrogator's page re-sends although it was said before the
            # takeover (its `after` says so): acknowledged, not said again.
            ch, text = questions["q-a"]
            await judge.send(type="message", id="q-a", after=asked, channel=ch, text=text)
            assert (await judge.until("ack"))["ref"] == "q-a"

            await judge.send(type="end", id="e-1")
            await judge.send(type="verdict", id="v-1", choice="A", confidence=50, reason="-")
            await judge.send(type="verdict", id="v-1", choice="A", confidence=50, reason="-")
            for p in (judge, witness):
                await p.until("reveal", timeout=30)
            shown = [f["text"] for f in judge.frames if f["type"] == "message"]
            assert shown.count(answer["text"]) == 1
        finally:
            for p in (a, b):
                await p.close()

    kept = ArenaStore(Store(postgres_url), takeover_setup())
    try:
        (done,) = [g for g in kept.records() if g["game"] == game]
        humans = {s for s, v in done["seats"].items() if v["kind"] == "human"}
        typed = [m["text"] for m in done["messages"] if m["sender"] in humans]
        assert typed == [*(t for _, t in questions.values()), answer["text"]]
        assert done["status"] == "finished" and len(done["judgements"]) == 1
    finally:
        kept.close()
        kept.store.close()

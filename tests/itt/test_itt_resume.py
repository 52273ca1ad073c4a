"""A live ITT session or an ITT conversation resumed from any prefix of its stored messages is
the game it would have been (the property a takeover relies on: arena/core/takeover.py).

Each game is played once whole, people's inputs pushed as a page pushes them; then, for every
point k, a fresh table is given the first k messages (as the store gives them to the process
taking over), the people only what they had not said yet, and the kind's `resume` plays on.
The transcript, the result (the verdict included, with its time) and the seed of every call
made after the catch-up are those of the whole game, and nobody is asked again for a message
already stored. A history that is not the game's own is refused.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Mapping
from typing import Any

import pytest

from games_helpers import direct_caller
from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.agents.human import MESSAGE, HumanAgent, HumanInput
from turinglab.games.control_log import event_from, event_json
from turinglab.games.conversation import ConversationExperiment
from turinglab.games.discarded_reply import ReplyDiscarded
from turinglab.games.events import GameEvent
from turinglab.games.held_message import MessageHeld
from turinglab.games.kinds import RESUMABLE, Game, GameContext, game_for
from turinglab.games.live_itt import JUDGE, LiveITTExperiment
from turinglab.games.spec import FINISHED, GameResult, TrialSpec
from turinglab.games.table import Diverged, Table, TranscriptMessage

QUESTIONS = ["Where did you grow up?", "What did you eat today?", "Cats or dogs?"]
ANSWERS = ["Near the sea, in a small town.", "Just toast so far.", "Dogs, always."]
CHAT = ["hey, read anything good lately?", "a crime novel, quite grim", "I like grim ones"]
VERDICT = {"human": "agent_b", "confidence": 80.0, "reason": "typos", "at": 7.5}


class SeedEcho:
    """Answers with the seed of its call: a call made with another seed than in the whole game
    (the call count not carried through the catch-up) changes the transcript."""

    def __init__(self, name: str, repeats: bool = False) -> None:
        self.name = name
        self.calls = 0
        self.repeats = repeats

    @property
    def endpoint(self) -> str | None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        self.calls += 1
        own = [m.content for m in history if m.role == "assistant"]
        if self.repeats and own and ctx.seed % 3 != 2:  # by its seed: a repeat,
            return AgentReply(own[0], Route("scripted", self.name))  # which is sampled again
        # The seed's digest: replies of one model are not alike (the conversation game would
        # sample a reply like an earlier one again: games/conversation.py `degenerate`).
        said = hashlib.sha256(str(ctx.seed).encode()).hexdigest()[:24]
        return AgentReply(f"{self.name} {said}", Route("scripted", self.name))

    async def aclose(self) -> None:
        return None


def _live_itt() -> tuple[Game, TrialSpec]:
    cfg = LiveITTExperiment(game="live-itt", ai_agents=["bot"], exchange_limits=[5])
    spec = TrialSpec(
        index=0,
        key="arena:live-itt#0",
        game="live-itt",
        seed=99,
        seats={JUDGE: "person:j", "agent_a": "bot", "agent_b": "person:h"},
        params={
            "exchanges": 3,
            "condition": "deceitful-ai",
            "life_story": "You are Ines, 30, a baker living in Porto.",
            "human_seat": "agent_b",
            "ai_seat": "agent_a",
        },
    )
    return game_for(cfg), spec


def _conversation(person_opens: bool) -> tuple[Game, TrialSpec]:
    cfg = ConversationExperiment(game="conversation", pairs=[("bot", "bot")], exchanges=6)
    seats = {"A": "person:p", "B": "bot"} if person_opens else {"A": "bot", "B": "person:p"}
    spec = TrialSpec(
        index=0,
        key="arena:itt-conversation#0",
        game="conversation",
        seed=7,
        seats=seats,
        params={"topic": "books", "exchanges": 6},
    )
    return game_for(cfg, GameContext(agent_kinds={"person:p": "human"})), spec


def _inputs(spec: TrialSpec) -> dict[str, list[HumanInput]]:
    """What each person does in the whole game, in order (as their pages push it)."""
    if spec.game == "live-itt":
        return {
            "person:j": [
                *(HumanInput(MESSAGE, q) for q in QUESTIONS),
                HumanInput("verdict", data=VERDICT),
            ],
            "person:h": [HumanInput(MESSAGE, a) for a in ANSWERS],
        }
    return {"person:p": [HumanInput(MESSAGE, t) for t in CHAT]}


class Discards:
    """The replies a game drew and did not say, each with the number of messages said before
    it (as the control log keeps them: `after_seq`)."""

    def __init__(self) -> None:
        self.table: Table | None = None
        self.seen: list[tuple[int, ReplyDiscarded]] = []

    def observe(self, event: GameEvent, to: tuple[str, ...]) -> None:
        if isinstance(event, ReplyDiscarded):
            assert self.table is not None
            self.seen.append((len(self.table.messages), event))


def _table(
    game: Game,
    spec: TrialSpec,
    said: list[TranscriptMessage],
    repeats: bool = False,
    discards: Discards | None = None,
) -> tuple[Table, Any]:
    """A fresh table over the stored messages `said`, each person given what they had not
    said yet (a stored message of theirs is one input of theirs used), and the replies
    discarded before the last of them (what the control log holds then)."""
    bot = SeedEcho("bot", repeats)
    people: dict[str, Any] = {}
    for name, items in _inputs(spec).items():
        human = HumanAgent(name, name)
        seats = [s for s, a in spec.seats.items() if a == name]
        used = sum(1 for m in said if m.sender in seats)
        for item in items[used:]:
            human.push(item)
        people[name] = human
    at_table = game.seats(spec, {"bot": bot, **people})
    table = Table(seats=at_table, caller=direct_caller, seed=spec.seed)
    if discards is not None:
        discards.table = table
        table.observer = discards
    table.replay([dataclasses.replace(m) for m in said])
    return table, bot


def _logged(discards: Discards, k: int) -> dict[int, AgentReply]:
    """The discarded replies logged by the time the k-th message was stored."""
    return {e.call: AgentReply(e.text, Route("stored", e.seat)) for n, e in discards.seen if n <= k}


def _said(table: Table) -> list[tuple[Any, ...]]:
    return [(m.seq, m.sender, m.text, m.visible_to, m.phase, m.channel) for m in table.messages]


def _outcome(result: GameResult) -> tuple[Any, ...]:
    judged = [(j.kind, j.verdict, j.confidence, j.reason, j.created_at) for j in result.judgements]
    return (result.status, result.correct, result.details, judged)


CASES: Mapping[str, Any] = {
    "live-itt": _live_itt,
    "conversation-person-opens": lambda: _conversation(True),
    "conversation-ai-opens": lambda: _conversation(False),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_resumed_from_any_point_it_is_the_same_game(case: str) -> None:
    game, spec = CASES[case]()
    resumable = RESUMABLE.of(game)
    assert resumable is not None
    whole, bot = _table(game, spec, [])
    expected = await game.play(whole, spec)
    assert expected.status == FINISHED
    said = _said(whole)
    assert len(said) >= 6 and bot.calls >= 3
    if spec.game == "live-itt":
        assert expected.judgements[0].created_at == VERDICT["at"]
    for k in range(len(said) + 1):
        table, bot = _table(game, spec, whole.messages[:k])
        result = await resumable.resume(table, spec, started_at=0.0)
        assert _said(table) == said, f"resumed after {k} messages"
        assert _outcome(result) == _outcome(expected), f"resumed after {k} messages"
        assert table.calls == whole.calls
        # Only what was not stored yet was asked of the model: one call per later line of it.
        later = [m for m in whole.messages[k:] if spec.seats.get(m.sender) == "bot"]
        assert bot.calls == len(later), f"resumed after {k} messages"


@pytest.mark.parametrize("person_opens", [True, False])
async def test_a_reply_sampled_again_is_given_again_to_a_resumed_conversation(
    person_opens: bool,
) -> None:
    """A model's reply the conversation rejected (a repeat) is not a message: the table reports
    it (the live game logs it) and a resumed game is given it again for its call, so it
    rejects it again, keeps the same `resamples` and every later call gets the seed it had."""
    game, spec = _conversation(person_opens)
    resumable = RESUMABLE.of(game)
    assert resumable is not None
    discards = Discards()
    whole, _ = _table(game, spec, [], repeats=True, discards=discards)
    expected = await game.play(whole, spec)
    assert expected.details["resamples"] and len(discards.seen) == len(
        expected.details["resamples"]
    )
    said = _said(whole)
    for k in range(len(said) + 1):
        table, _ = _table(game, spec, whole.messages[:k], repeats=True)
        table.unsaid = _logged(discards, k)
        result = await resumable.resume(table, spec, started_at=0.0)
        assert _said(table) == said, f"resumed after {k} messages"
        assert _outcome(result) == _outcome(expected), f"resumed after {k} messages"
        assert table.calls == whole.calls


@pytest.mark.parametrize("case", list(CASES))
async def test_a_history_that_is_not_the_game_s_own_is_refused(case: str) -> None:
    game, spec = CASES[case]()
    resumable = RESUMABLE.of(game)
    assert resumable is not None
    whole, _ = _table(game, spec, [])
    await game.play(whole, spec)
    person = next(m for m in whole.messages if "person" in spec.seats.get(m.sender, ""))
    changed = [dataclasses.replace(m) for m in whole.messages[: person.seq + 1]]
    changed[person.seq].text = "not what this person said"
    swapped = [dataclasses.replace(m) for m in whole.messages[:4]]
    swapped[3].sender = next(s for s in spec.seats if s != swapped[3].sender)
    longer = [dataclasses.replace(m) for m in whole.messages]
    longer.append(dataclasses.replace(whole.messages[-1], seq=len(longer)))
    for history, match in ((swapped, "message 3"), (longer, "before the history")):
        table, _ = _table(game, spec, history)
        with pytest.raises(Diverged, match=match):
            await resumable.resume(table, spec, started_at=0.0)
    # A person's stored line is the one the game says again, whatever its text: the game
    # reads it from the store, not from the person (nothing to check it against).
    table, _ = _table(game, spec, changed)
    await resumable.resume(table, spec, started_at=0.0)
    assert table.messages[person.seq].text == "not what this person said"


def test_the_itt_control_events_round_trip_through_the_log() -> None:
    for event in (MessageHeld("agent_b", "Dogs, always.", "turn-3"), ReplyDiscarded(4, "B", "hi")):
        assert event_from(event.kind, event_json(event)) == event

"""ELIZA with the 1966 DOCTOR script: the published conversation, the agent, custom scripts."""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from turinglab.agents.base import Agent, CallContext, ChatMessage
from turinglab.agents.eliza import (
    ElizaAgent,
    ElizaEngine,
    ScriptError,
    last_cell_bcd,
    load_doctor_script,
    parse_script,
    sentence_case,
    slip_hash,
    tokenize,
)

CTX = CallContext(seed=1)

# Weizenbaum, CACM 9(1), 1966, p. 36-37: the user's line, then ELIZA's reply.
PUBLISHED_CONVERSATION = [
    ("Men are all alike.", "IN WHAT WAY"),
    ("They're always bugging us about something or other.", "CAN YOU THINK OF A SPECIFIC EXAMPLE"),
    ("Well, my boyfriend made me come here.", "YOUR BOYFRIEND MADE YOU COME HERE"),
    ("He says I'm depressed much of the time.", "I AM SORRY TO HEAR YOU ARE DEPRESSED"),
    (
        "It's true. I am unhappy.",
        "DO YOU THINK COMING HERE WILL HELP YOU NOT TO BE UNHAPPY",
    ),
    (
        "I need some help, that much seems certain.",
        "WHAT WOULD IT MEAN TO YOU IF YOU GOT SOME HELP",
    ),
    ("Perhaps I could learn to get along with my mother.", "TELL ME MORE ABOUT YOUR FAMILY"),
    ("My mother takes care of me.", "WHO ELSE IN YOUR FAMILY TAKES CARE OF YOU"),
    ("My father.", "YOUR FATHER"),
    ("You are like my father in some ways.", "WHAT RESEMBLANCE DO YOU SEE"),
    (
        "You are not very aggressive but I think you don't want me to notice that.",
        "WHAT MAKES YOU THINK I AM NOT VERY AGGRESSIVE",
    ),
    ("You don't argue with me.", "WHY DO YOU THINK I DON'T ARGUE WITH YOU"),
    ("You are afraid of me.", "DOES IT PLEASE YOU TO BELIEVE I AM AFRAID OF YOU"),
    (
        "My father is afraid of everybody.",
        "WHAT ELSE COMES TO MIND WHEN YOU THINK OF YOUR FATHER",
    ),
    (
        "Bullies.",
        "DOES THAT HAVE ANYTHING TO DO WITH THE FACT THAT YOUR BOYFRIEND MADE YOU COME HERE",
    ),
]


def normalise(text: str) -> str:
    return " ".join(text.split()).rstrip(".?!")


def history_of(user_lines: list[str], replies: list[str] | None = None) -> list[ChatMessage]:
    """A participant's view: ELIZA's earlier replies as 'assistant', the inputs as 'user'."""
    messages: list[ChatMessage] = []
    for i, line in enumerate(user_lines):
        if replies is not None and i < len(replies):
            messages.append(ChatMessage("assistant", replies[i]))
        messages.append(ChatMessage("user", line))
    return messages


# ---------------------------------------------------------------------------- (a) fidelity


def test_published_conversation_reply_by_reply() -> None:
    engine = ElizaEngine.doctor()
    for turn, (said, expected) in enumerate(PUBLISHED_CONVERSATION, start=1):
        got = engine.respond(said)
        assert normalise(got) == normalise(expected), f"turn {turn}: {said!r}"


async def test_published_conversation_through_the_agent() -> None:
    agent = ElizaAgent()
    lines = [said for said, _ in PUBLISHED_CONVERSATION]
    for turn, (_, expected) in enumerate(PUBLISHED_CONVERSATION, start=1):
        reply = await agent.reply(history_of(lines[:turn]), CTX)
        assert normalise(reply.text) == normalise(expected), f"turn {turn}"


def test_slip_hash_matches_the_known_cases() -> None:
    # "ALWAYS" -> 14 is in the 1966 paper; HERE -> 3 is what the published conversation needs.
    assert last_cell_bcd("HERE") == 0o302551256060
    assert slip_hash(last_cell_bcd("ALWAYS"), 7) == 14
    assert slip_hash(last_cell_bcd("HERE"), 2) == 3
    assert slip_hash(last_cell_bcd("KIDS"), 2) == 1
    assert slip_hash(last_cell_bcd("TIME"), 2) == 0
    assert last_cell_bcd("INVENTED") == last_cell_bcd("ED")  # only the last 6-char cell


def test_but_ends_a_clause_like_a_comma() -> None:
    engine = ElizaEngine.doctor()
    assert engine.respond("You are clever but I am tired") == "WHAT MAKES YOU THINK I AM CLEVER"


# ---------------------------------------------------------------------------- (b) agent state


async def test_same_history_gives_same_reply() -> None:
    agent = ElizaAgent()
    history = history_of([said for said, _ in PUBLISHED_CONVERSATION[:9]])
    first = await agent.reply(history, CTX)
    again = await agent.reply(history, CTX)
    other = await ElizaAgent("another").reply(list(history), CTX)
    assert first.text == again.text == other.text == "YOUR FATHER"


async def test_replay_equals_incremental_use() -> None:
    lines = [
        "I feel bad about my job.",
        "Computers scare me.",
        "Whatever.",
        "No.",
        "Hmm.",
        "You remind me of my brother.",
        "Why can't you help me?",
        "...",
    ]
    engine = ElizaEngine.doctor()
    incremental = [engine.respond(line) for line in lines]
    agent = ElizaAgent()
    for turn in range(1, len(lines) + 1):
        # ELIZA's own earlier replies and system messages do not change what it says.
        history = [ChatMessage("system", "ignored"), *history_of(lines[:turn], incremental)]
        reply = await agent.reply(history, CTX)
        assert reply.text == incremental[turn - 1]


async def test_agent_protocol_and_route() -> None:
    agent = ElizaAgent()
    assert isinstance(agent, Agent)
    assert agent.endpoint is None
    reply = await agent.reply(history_of(["Hello"]), CTX)
    assert reply.text == "HOW DO YOU DO. PLEASE STATE YOUR PROBLEM"
    assert (reply.route.backend, reply.route.model) == ("eliza", "DOCTOR-1966")
    assert reply.tokens_in is None and reply.tokens_out is None
    assert reply.latency_s is not None and reply.latency_s >= 0
    await agent.aclose()


async def test_sentence_case() -> None:
    agent = ElizaAgent(case="sentence")
    assert (await agent.reply([], CTX)).text == "How do you do. Please tell me your problem"
    reply = await agent.reply(history_of(["You are afraid of me."]), CTX)
    assert reply.text == "What makes you think I am afraid of you"
    assert sentence_case("OH, I'M SURE I SEE. WELL") == "Oh, I'm sure I see. Well"
    unknown: Any = "lower"
    with pytest.raises(ValueError):
        ElizaAgent(case=unknown)


# ---------------------------------------------------------------------------- (c) greeting


@pytest.mark.parametrize(
    "history",
    [[], [ChatMessage("system", "You are a therapist.")], [ChatMessage("assistant", "Hi")]],
)
async def test_greeting_when_no_user_message(history: list[ChatMessage]) -> None:
    reply = await ElizaAgent().reply(history, CTX)
    assert reply.text == "HOW DO YOU DO. PLEASE TELL ME YOUR PROBLEM"


# ---------------------------------------------------------------------------- (d) memory


def test_memory_is_recalled_when_limit_is_four() -> None:
    engine = ElizaEngine.doctor()
    assert engine.respond("My car is broken.") == "YOUR CAR IS BROKEN"  # LIMIT 2
    assert len(engine.memories) == 1
    assert engine.respond("Hmm.") == "I AM NOT SURE I UNDERSTAND YOU FULLY"  # LIMIT 3: NONE
    recalled = engine.respond("Okay then.")  # LIMIT 4, no keyword: the memory
    assert recalled.endswith("YOUR CAR IS BROKEN")
    assert recalled != "YOUR CAR IS BROKEN"
    assert engine.memories == ()
    assert engine.respond("Sure.") == "PLEASE GO ON"  # queue empty: NONE again


def test_memory_only_when_my_is_the_keyword_used() -> None:
    engine = ElizaEngine.doctor()
    engine.respond("My computer hates me.")  # COMPUTER (rank 50) outranks MY
    assert engine.memories == ()


# ---------------------------------------------------------------------------- (e) robustness

WEIRD_INPUTS = [
    "",
    "   \t\n ",
    "?!?!...,,,;;::",
    "😀😀😀",
    "Ça va? Ñandú — ÜBER straße «quoted» “smart” ‘single’",
    "\x00\x01\x7f control \x1b[31m",
    "a" * 100_000,
    "my " * 20_000,
    "I " + "you " * 5_000 + "me",
    ". , . , but BUT but",
    "0 1 2 3 4 5 6 7 8 9 = ' + ( ) $ * /",
    "NONE MEMORY DIT XFREMD NEWKEY PRE",
    "'''---'''",
    "I'm -- I'm 'I'm' ‘I’m’",
    "\ud800 lone surrogate",
]


@pytest.mark.parametrize("text", WEIRD_INPUTS)
def test_weird_input_never_raises(text: str) -> None:
    engine = ElizaEngine.doctor()
    for _ in range(5):  # cycle through LIMIT, memories and reassembly counters
        reply = engine.respond(text)
        assert isinstance(reply, str) and reply.strip()


async def test_agent_on_weird_history_is_quick() -> None:
    history = history_of(WEIRD_INPUTS * 3)
    start = time.process_time()  # CPU seconds: the cost, not the neighbours' load
    reply = await ElizaAgent().reply(history, CTX)
    assert reply.text.strip()
    assert time.process_time() - start < 2.0


def test_tokenize() -> None:
    assert " ".join(tokenize("Hello, world! How are you?")) == "HELLO , WORLD . HOW ARE YOU ."
    assert tokenize("I’m “fine” (really)") == ["I'M", "FINE", "REALLY"]


# ---------------------------------------------------------------------------- (f) custom script

TINY_SCRIPT = """
# a toy script in the same format
greeting HELLO.  WHAT IS ON YOUR MIND
nomatch OOPS

key I sub=YOU
  decomp 0 YOU LIKE 0
    reasm WHY DO YOU LIKE 4
    reasm YOU REALLY LIKE 4
  decomp 0 YOU AM 0
    pre BE YOU ARE 4
  decomp 0
    newkey
key ME sub=YOU
key BE
  decomp 0 YOU ARE (/MOOD) 0
    reasm HOW LONG HAVE YOU BEEN 4
  decomp 0
    reasm BEING IS HARD
key HAPPY tags=MOOD
key CAT rank=5 link=PET
key DOG rank=5
  decomp 0
    goto PET
key PET
  decomp 0 (* CAT DOG) 0
    reasm TELL ME ABOUT YOUR 2
key BROKEN
  decomp NEVER MATCHES
    reasm UNREACHABLE

none
  reasm GO ON
  reasm YOU SAID 1
"""


def test_custom_script() -> None:
    engine = ElizaEngine.from_script_text(TINY_SCRIPT)
    assert engine.greeting == "HELLO. WHAT IS ON YOUR MIND"
    assert engine.respond("I like tea") == "WHY DO YOU LIKE TEA"  # substitution, part 4
    assert engine.respond("I like you") == "YOU REALLY LIKE YOU"  # reassemblies cycle
    assert engine.respond("I like cake") == "WHY DO YOU LIKE CAKE"
    assert engine.respond("I am happy today") == "HOW LONG HAVE YOU BEEN HAPPY"  # pre + tag
    assert engine.respond("I am tall") == "BEING IS HARD"
    assert engine.respond("I see my cat") == "TELL ME ABOUT YOUR CAT"  # rank, then link
    assert engine.respond("the dog barks") == "TELL ME ABOUT YOUR DOG"  # goto
    assert engine.respond("nothing here") == "GO ON"  # no memory section: NONE
    assert engine.respond("I wonder") == "YOU SAID YOU WONDER"  # newkey with no key left
    assert engine.respond("broken") == "OOPS"  # keyword whose rules match nothing


def test_doctor_script_loads_from_the_package() -> None:
    script = load_doctor_script()
    assert script.memory_key == "MY" and len(script.memory) == 4
    assert script.entries["MY"].rank == 2 and script.entries["MY"].substitute == "YOUR"
    assert "BUT" in script.delimiters


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("key A\n  decomp 0\n    reasm X\nnone\n  reasm Y", "no greeting"),
        ("greeting HI\nkey A\n  decomp 0\n    reasm X", "no none section"),
        ("greeting HI\nnone\n  reasm Y\nkey A\n  decomp 0 A\n    reasm 3", "part 3"),
        ("greeting HI\nnone\n  reasm Y\nkey A\n  decomp 0\n    goto B", "not a keyword"),
        ("greeting HI\nnone\n  reasm Y\nkey A rank=high", "bad option"),
        ("greeting HI\nnone\n  reasm Y\nfrobnicate", "unknown directive"),
        ("greeting HI\nnone\n  reasm Y\n  reasm 2", "part 2"),
        ("greeting HI\nreasm X\nnone\n  reasm Y", "decomp outside"),
    ],
)
def test_bad_scripts_are_rejected(text: str, error: str) -> None:
    with pytest.raises(ScriptError, match=re.escape(error)):
        parse_script(text)


def test_circular_links_end_in_a_nomatch_reply() -> None:
    text = "greeting HI\nnomatch LOST\nkey A link=B\nkey B link=A\nnone\n  reasm Y"
    assert ElizaEngine.from_script_text(text).respond("a") == "LOST"

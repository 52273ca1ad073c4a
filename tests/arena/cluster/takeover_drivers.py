"""Every resumable mode as a row of MODES, for test_arena_takeover_modes.py: how to seat its
people and play it partway (on the process that will lose it), how to finish it (on the other),
and what the finished game's store must then hold.

A mode is added with one row: its drivers (takeover_drivers_turns.py, takeover_drivers_chats.py)
and its audit's expectations, as fields (a mode without a verdict expects no judgement).
`modes_setup()` is the arena both server processes serve (`SERVER`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field

from arena_fixtures import engine_setup
from takeover_drivers_chats import (
    CHAT,
    chat_finish,
    chat_partway,
    gtt_actor_finish,
    gtt_actor_partway,
    gtt_judge_finish,
    gtt_judge_partway,
    gtt_watch_finish,
    gtt_watch_partway,
)
from takeover_drivers_turns import (
    itt_finish,
    itt_partway,
    strong_finish,
    strong_partway,
    three_finish,
    three_partway,
    two_finish,
    two_partway,
)
from takeover_gtt_setup import gtt_takeover_setup
from takeover_play import Play
from test_arena_multiprocess import Processes
from test_arena_strong import INVESTIGATOR_BOT, STAND_IN, SYSTEM_AGENT, strong_setup
from test_arena_takeover import TAKEOVER_AFTER_S
from turinglab.agents.scripted import ScriptedAgent
from turinglab.arena import ArenaSettings, ArenaSetup
from turinglab.arena.modes.itt_chat_mode import itt_chat_mode
from turinglab.arena.modes.live_itt_mode import live_itt_mode
from turinglab.arena.modes.strong_mode import strong_mode
from turinglab.games.conversation import ConversationExperiment
from turinglab.games.live_itt import LiveITTExperiment
from turinglab.games.strong import StrongExperiment

ITT_AI = "murrow-itt-agent-5"
ITT_AI_ANSWERS = ["just pasta", "rainy here", "a bit tired", "no pets", "the beach"]
CHAT_AI = "pat-chat-partner-3"  # the chat's AI partner, never met: two people are matched


@dataclass(frozen=True)
class Mode:
    partway: Callable[[Processes], Awaitable[Play]]
    finish: Callable[[Play], Awaitable[None]]
    frame: str  # the people's state frame: what a rebuilt game first sends them
    channel: str  # where a person writes (the message sent to a hung owner too)
    judgements: int  # rows the finished game stores: verdicts, STT preferences (none: 0)
    # Control events besides input ids (each applied once) and clock pauses: kind -> count.
    decisions: Mapping[str, int] = field(default_factory=dict)
    held: bool = False  # its models wait for the gate until the game is taken over
    replays: bool = False  # every decision is a message: the engine plays the store again


MODES = {
    "three-party": Mode(three_partway, three_finish, "game", "A", judgements=1),
    "two-party": Mode(two_partway, two_finish, "game", "A", judgements=1),
    "strong": Mode(
        strong_partway,
        strong_finish,
        "strong",
        "A",
        judgements=2,
        decisions={"choice": 2, "held": 2},  # the respondent's answer held once a turn
    ),
    "gtt-distinguish": Mode(
        gtt_judge_partway,
        gtt_judge_finish,
        "gtt",
        "test",
        judgements=1,
        decisions={"verdict": 1},
        replays=True,
    ),
    # The model judges: its answer is the game's verdict, no person's judgement.
    "gtt-act": Mode(gtt_actor_partway, gtt_actor_finish, "gtt", "test", 0, replays=True),
    "gtt-watch": Mode(
        gtt_watch_partway, gtt_watch_finish, "gtt", "test", 0, held=True, replays=True
    ),
    "live-itt": Mode(
        itt_partway,
        itt_finish,
        "strong",
        "A",
        judgements=1,
        decisions={"verdict": 1, "held": 5},  # the human agent's answer held once a turn
    ),
    # A conversation: no verdict; it ends after its four messages.
    CHAT: Mode(chat_partway, chat_finish, "itt-chat", "A", 0, replays=True),
}


def modes_setup() -> ArenaSetup:
    """The engine's three-party game and two-party practice, the STT with two people (an
    investigator and a human respondent beside a scripted system), two turns, the live ITT
    with two people, the GTT modes with two gated scripted models (takeover_gtt_setup.py) and
    the ITT chat between two people."""
    engine, strong, gtt = engine_setup(), strong_setup(), gtt_takeover_setup()
    stt = StrongExperiment.model_validate(
        {
            "game": "strong",
            "investigators": [INVESTIGATOR_BOT],
            "systems": [SYSTEM_AGENT],
            "humans": [STAND_IN],
            "stand_ins": [STAND_IN],
            "turns": 2,
            "input_timeout_s": 60,
        }
    )
    itt = LiveITTExperiment.model_validate(
        {"game": "live-itt", "ai_agents": [ITT_AI], "exchange_limits": [5], "input_timeout_s": 60}
    )
    chat = ConversationExperiment(
        game="conversation", pairs=[(CHAT_AI, CHAT_AI)], exchanges=4, topics=["books"]
    )
    return ArenaSetup(
        [
            *engine.modes,
            strong_mode("strong", "Strong Turing Test", stt),
            live_itt_mode("live-itt", "Live integrative test", itt),
            *gtt.modes,
            # Not abandoned while a person reconnects to the new owner on a busy machine.
            itt_chat_mode(CHAT, "Chat about a topic", chat, abandon_after_s=60),
        ],
        {
            **engine.agents,
            **strong.agents,
            **gtt.agents,
            ITT_AI: ScriptedAgent(ITT_AI, ITT_AI_ANSWERS, cycle=True),
            CHAT_AI: ScriptedAgent(CHAT_AI, ["oh, which one?"], cycle=True),
        },
        {
            **engine.display_names,
            **strong.display_names,
            **gtt.display_names,
            ITT_AI: "Murrow (scripted)",
            CHAT_AI: "Pat (scripted)",
        },
        ArenaSettings(ai_after_s=600, takeover_after_s=TAKEOVER_AFTER_S),
    )


SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import serve_on_fd, ADMIN_PASSWORD
from takeover_drivers import modes_setup
from turinglab.arena import create_app
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
setup = modes_setup()
app = create_app(
    setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup, worker={port!r}),
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""

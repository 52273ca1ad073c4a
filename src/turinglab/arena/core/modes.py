"""What the arena offers: game modes (a game plus how people sit at it) and its settings.

The arena is only a transport, so it needs to know just enough of a game's layout to route
people: which seat judges, which seats are witnesses, and which channel connects the judge to
each witness. The game itself (turinglab.games) decides everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from turinglab.agents.base import Agent
from turinglab.arena.core.match_design import MatchDesign
from turinglab.arena.core.study_config import StudyConfig
from turinglab.games.kinds import Game
from turinglab.games.spec import TrialSpec

# (index, seat -> agent name, seed) -> the trial to play; lets a game fill its own params
# (sampled witness facts, labels) the way its plan() would.
SpecFactory = Callable[[int, dict[str, str], int], TrialSpec]


@dataclass(frozen=True)
class ArenaMode:
    """One game people can play here.

    `channel_of` maps each witness seat to the channel it shares with the judge. The arena
    seats a second person (if any) in a randomly drawn witness seat and AI agents, drawn from
    `ai_agents`, in the others; `solo` modes never seat a second person and are never study
    data. The class that plays its games is its game's kit's (mode_kits.py)."""

    name: str  # "two-party", "three-party", "practice-two-party", ...
    title: str  # shown in the lobby
    game: Game
    judge: str
    channel_of: Mapping[str, str]
    ai_agents: tuple[str, ...]
    verdict: str = "which"  # "which" (pick a witness) or "human-or-ai"
    duration_s: float | None = 300.0
    max_chars: int = 300
    solo: bool = False
    spec_for: SpecFactory | None = None  # None: a bare spec (seats, seed, arena params)
    about: str = ""  # one line the lobby shows under the title
    # AI witness groups one study game meets from its interrogator's cycle (rounds.py); None:
    # one per AI witness seat. A session with one AI agent among stand-ins (STT) meets one.
    ai_groups_per_game: int | None = None

    @property
    def witnesses(self) -> tuple[str, ...]:
        return tuple(self.channel_of)


def lobby_pick(assigned: Mapping[str, str], judge: str, agents: Sequence[str]) -> str | None:
    """The AI agent the lobby seated for this game (the next group of the judge's cycle, in a
    study), for modes whose spec places its agents itself: the first of `agents` it put in a
    seat other than the judge's; None if it put none there."""
    return next((a for s, a in assigned.items() if s != judge and a in agents), None)


class ArenaSettings(BaseModel):
    """Knobs that are not part of a game's design (they never change results)."""

    model_config = ConfigDict(extra="forbid")

    # How study games are formed. A design (matchmaking_wait.py): the witness kind decided by
    # its share, every wait drawn from one distribution, so the time to a game says nothing.
    # None: open matching — people first, a lone person meets an AI after `ai_after_s` — which
    # lets the wait give the witness away; for development and tests only.
    design: MatchDesign | None = None
    ai_after_s: float = Field(default=20.0, ge=0)  # open matching only
    max_wait_s: float = Field(default=300.0, gt=0)  # then on to the exit survey
    # A person with no connection this long has left: their game ends abandoned (abandon.py).
    abandon_after_s: float = Field(default=12.0, gt=0)
    frames_per_s: float = Field(default=4.0, gt=0)  # per connection, sustained
    frame_burst: int = Field(default=12, ge=1)
    max_frame_bytes: int = Field(default=16384, ge=256)
    # New sessions (POST /consent) per client address within the window, and in all; the
    # same for new judges (/judge) and respondents (/respond), each counted apart
    # (arena/http/new_records.py): a loop cannot fill the study, the disk or the memory.
    consents_per_address: int = Field(default=60, ge=1)
    consent_window_s: float = Field(default=600.0, gt=0)
    max_sessions: int = Field(default=100_000, ge=1)
    # Open websockets per session in one process (tabs); more are refused (player_socket.py).
    max_sockets_per_session: int = Field(default=8, ge=1)
    # Several processes (cluster.py): one silent this long is taken for dead, and another
    # takes over its live games.
    takeover_after_s: float = Field(default=10.0, gt=0)
    seed: int = 0
    # Study rounds per participant (half as interrogator), then on to the exit survey.
    rounds: int = Field(default=8, ge=1)
    # Finished games kept in memory when a store holds them all (no store: all are kept).
    finished_in_memory: int = Field(default=1000, ge=1)
    # Before serving: each AI witness's generation time against the delay model's reply time
    # (witness_preflight.py): refuse a witness too slow to pass for a person, warn, or skip
    # (not "off": YAML reads that as false).
    witness_timing: Literal["refuse", "warn", "skip"] = "refuse"
    # The longest an AI witness's reply may take to appear (the delay model's time for it):
    # people's replies took 11.1 s (median) in the pilot; longer ones are a tell.
    witness_reply_max_s: float = Field(default=30.0, gt=0)
    # What the pages say (consent, instructions, exit survey) and where people go at the end.
    study: StudyConfig = Field(default_factory=StudyConfig)


@dataclass
class ArenaSetup:
    """Everything `create_app` needs: the modes, the agents they may seat, the settings."""

    modes: list[ArenaMode]
    agents: Mapping[str, Agent]
    display_names: Mapping[str, str] = field(default_factory=dict)
    settings: ArenaSettings = field(default_factory=ArenaSettings)
    name: str = "arena"  # the study's name (its config's `name`): the store's run, the admin

    def mode(self, name: str) -> ArenaMode | None:
        return next((m for m in self.modes if m.name == name), None)

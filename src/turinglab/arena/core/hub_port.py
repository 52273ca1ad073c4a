"""What the web layer asks of the arena, whether one process serves it or several.

The routes and the websocket talk to a `Hub`, never to the cluster: `local_hub.LocalHub` is one
process's arena, `cluster_hub.ClusterHub` the same arena as one of several processes (Redis
between them). Which one a web app gets is decided once, where it is composed (app.py), so no
route asks "is there a cluster?": what differs between the two lives behind these methods.

A hub's shared services (Redis) may not answer for a while; the hub then raises
`HubUnreachable`, and the socket tells the page to retry (or to reconnect) instead of failing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from turinglab.arena.core import frames as F
    from turinglab.arena.core.hub import Arena
    from turinglab.arena.core.participants import Participant
    from turinglab.arena.core.person_view import Outlet
    from turinglab.arena.core.resume import ResumePoint

HERE = "here"  # `Hub.owner_of`: the game is played in this process


class HubUnreachable(Exception):
    """A service every process shares (Redis) did not answer: nothing was done, try again."""


class Hub(Protocol):
    @property
    def arena(self) -> Arena:
        """This process's arena: its sessions, setup, games and store."""
        ...

    @property
    def process(self) -> str | None:
        """This process's name among several; None when it is the only one."""
        ...

    @property
    def study_fixed(self) -> str | None:
        """Why the admin may not open another study here (None: the hub does not forbid it)."""
        ...

    @property
    def people_scope(self) -> str:
        """Whose people this process's memory holds, in words ("": everyone's)."""
        ...

    # ---- lifetime: the web app's ---------------------------------------------------------

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def tick(self) -> None:
        """Every half second while the app runs: timeouts, matchmaking, heartbeats."""
        ...

    # ---- a person's socket ---------------------------------------------------------------

    async def connect(
        self, person: Participant, outlet: Outlet, resume: ResumePoint | None
    ) -> None:
        """A socket of `person` opened (or reopened, resuming a game stream)."""
        ...

    async def handle(self, person: Participant, frame: F.ClientFrame) -> None:
        """A frame from `person`, played wherever their game is (InputRejected if refused)."""
        ...

    async def disconnect(self, person: Participant, outlet: Outlet) -> None: ...

    async def withdraw(self, person: Participant) -> None:
        """Consent withdrawn: marked so, and out of every queue, wherever they wait."""
        ...

    # ---- what the admin sees and does ----------------------------------------------------

    async def live_games(self) -> list[dict[str, Any]]:
        """Every live game of the arena (each with its owner, with several processes)."""
        ...

    async def owner_of(self, gid: str) -> str | None:
        """Which process plays live game `gid`: HERE, another live process, or None."""
        ...

    async def end_game(self, owner: str, gid: str, reason: str) -> None:
        """End live game `gid` (played by `owner`, from `owner_of`) for the admin's reason."""
        ...

    def fallbacks_here(self) -> int:
        """Blind-matching fallbacks drawn by this process (matchmaking_wait.py, shared_blind.py)."""
        ...

    async def study_fallbacks(self) -> int:
        """Blind-matching fallbacks of the whole study, every process's."""
        ...

    def metric_rows(self) -> list[list[str]]:
        """The hub's own /metrics rows (metrics_page.metric), after the arena's."""
        ...

    async def health(self) -> dict[str, bool]:
        """Whether each service this process needs answers now (/healthz)."""
        ...

"""The arena's hooks (core/game_hooks.py) are given as it is built and are the ones it calls.

Whoever runs the arena across processes (the cluster) hands its hooks to the `Arena`
constructor; nothing plugs them in afterwards. So a one-process arena built with hooks of the
test's calls them as its games start, end, give rounds back and are fenced, asks their
presence rule (not its own), and tells them when a seat was first counted gone; and nothing in
the arena's source assigns onto an arena or its abandon watch from outside.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path
from typing import Any

from arena_fixtures import make_setup
from turinglab.arena import core
from turinglab.arena.core import frames as F
from turinglab.arena.core.game_hooks import GameHooks
from turinglab.arena.core.hub import Arena
from turinglab.arena.core.live import LiveGame
from turinglab.arena.core.presence import Attending

GRACE_S = 0.05
ARENA_SRC = Path(core.__file__).resolve().parent.parent
# The hooks' names on a game: set only in its own constructor, from the hooks it is given.
GAME_HOOK_ATTRS = {"present", "on_fenced", "_on_fenced", "hooks"}


def _outside_assignments(tree: ast.AST) -> list[tuple[int, str]]:
    """Assignments onto an arena (`arena.x =`, `self.arena.x =`, `cluster.arena.x =`) or its
    abandon watch (`….abandon.x =`), and any assignment of a game hook's attribute that is not
    `self.<attr>` in an `__init__`."""
    found: list[tuple[int, str]] = []
    inits = {
        id(n)
        for f in ast.walk(tree)
        if isinstance(f, ast.FunctionDef) and f.name == "__init__"
        for n in ast.walk(f)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        for target in targets:
            for t in ast.walk(target):
                if not isinstance(t, ast.Attribute) or not isinstance(t.ctx, ast.Store):
                    continue
                owner = t.value
                onto_arena = (isinstance(owner, ast.Name) and owner.id == "arena") or (
                    isinstance(owner, ast.Attribute) and owner.attr in ("arena", "abandon")
                )
                own_init = isinstance(owner, ast.Name) and owner.id == "self" and id(node) in inits
                if onto_arena or (t.attr in GAME_HOOK_ATTRS and not own_init):
                    found.append((t.lineno, ast.unparse(t)))
    return found


def test_nothing_in_the_arena_assigns_onto_an_arena_or_its_abandon_watch_from_outside() -> None:
    found = [
        f"{path.relative_to(ARENA_SRC)}:{line}: {what}"
        for path in sorted(ARENA_SRC.rglob("*.py"))
        for line, what in _outside_assignments(ast.parse(path.read_text(), str(path)))
    ]
    assert found == [], "collaborators come through constructors (game_hooks.py):\n" + "\n".join(
        found
    )


def test_the_scan_sees_hooks_assigned_after_construction() -> None:
    """The scan above would catch the old wiring (cluster.py plugging hooks in afterwards)."""
    old = (
        "def __init__(self, arena):\n"
        "    arena.abandon.present = self._present\n"
        "    arena.on_game_start = self._game_started\n"
        "def _game_started(self, game):\n"
        "    game.on_fenced = self._fenced\n"
        "    game.present = self.arena.abandon.is_present\n"
        "    self.arena.store = None\n"
    )
    assert [w for _line, w in _outside_assignments(ast.parse(old))] == [
        "arena.abandon.present",
        "arena.on_game_start",
        "game.on_fenced",
        "game.present",
        "self.arena.store",
    ]


async def test_a_one_process_arena_calls_the_hooks_it_was_built_with() -> None:
    started: list[LiveGame] = []
    ended: list[LiveGame] = []
    given_back: list[LiveGame] = []
    fenced: list[LiveGame] = []
    noted: list[tuple[str, str, float | None]] = []
    asked: list[Any] = []  # the games' views (PersonView)

    def nobody_present(view: Attending) -> bool:  # though their sockets are open here
        asked.append(view)
        return False

    hooks = GameHooks(
        game_started=started.append,
        game_ended=ended.append,
        rounds_given_back=given_back.append,
        game_fenced=fenced.append,
        present=nobody_present,
        seat_gone_since=lambda game, seat, since: noted.append((game, seat, since)),
    )
    arena = Arena(make_setup(abandon_after_s=GRACE_S), hooks=hooks)
    people = [arena.sessions.new() for _ in range(2)]
    for person in people:
        arena.connect(person, lambda frame: None)
        arena.handle(person, F.Join(type="join", mode="three-party", consent=True))
    (game,) = arena.games.values()
    try:
        assert started == [game] and ended == []
        assert game.present is nobody_present  # the one rule, which its own watcher asks too

        arena.tick()  # nobody present by the hooks' rule: counted gone ...
        assert noted and game.result is None
        await asyncio.sleep(GRACE_S * 2)
        arena.tick()  # ... and, the grace over, the game abandoned
        assert asked and {v.participant.id for v in asked} <= {p.id for p in people}
        assert noted and all(g == game.id and since is not None for g, _s, since in noted)
        assert game.result is not None and game.result.status == "abandoned"
        assert ended == [game] and given_back == [game]
        assert fenced == []
    finally:
        if game.task is not None:
            game.task.cancel()


async def test_a_fenced_game_tells_the_hooks_of_the_arena_that_built_it() -> None:
    fenced: list[LiveGame] = []
    arena = Arena(make_setup(), hooks=GameHooks(game_fenced=fenced.append))
    people = [arena.sessions.new() for _ in range(2)]
    for person in people:
        arena.connect(person, lambda frame: None)
        arena.handle(person, F.Join(type="join", mode="three-party", consent=True))
    (game,) = arena.games.values()
    try:
        game.fenced()  # a write of it was refused: another process owns it
        assert fenced == [game]
    finally:
        if game.task is not None:
            game.task.cancel()

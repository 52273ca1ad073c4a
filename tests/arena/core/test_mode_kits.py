"""The arena's mode kits (arena/core/mode_kits.py): one per game kind the arena plays, each the only
place its modes are named. Setups, the live core and the web layer find a kind's setup, live
class and witness timing through its kit; the kits load lazily, one module per kind."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path
from typing import get_args

import pytest

from turinglab.arena.cluster import cluster
from turinglab.arena.core import page_protocol
from turinglab.arena.core.frames import ServerFrame
from turinglab.arena.core.live import LiveGame, live_class
from turinglab.arena.core.mode_kits import (
    BUILTIN_KIT_MODULES,
    downloads,
    kit_for,
    kit_named,
    kits,
    state_frames,
)
from turinglab.config import load_config
from turinglab.games.kinds import kind_named
from turinglab.games.kinds import kinds as game_kinds

ROOT = Path(__file__).resolve().parents[3]
CONFIGS = ROOT / "configs"
ARENA = ROOT / "src" / "turinglab" / "arena"
KIT_MODULES = {m.rpartition(".")[2] for m in BUILTIN_KIT_MODULES.values()}
# Mode modules of their own kit: a kit's live class lives beside its modes (gtt_live.py);
# its survey wording too. Nothing else may.
OWN_MODULES = {"gtt_live", "survey_rewording"}


def test_every_kind_the_arena_plays_has_one_kit_registered_by_its_module() -> None:
    # Tests register game kinds of their own (test_runner_generic.py); the package's are ours.
    builtin = {
        n
        for n, k in game_kinds().items()
        if k.arena_modes and k.config.__module__.startswith("turinglab.")
    }
    assert set(kits()) == builtin == set(BUILTIN_KIT_MODULES)
    for game, module in BUILTIN_KIT_MODULES.items():
        kit = kits()[game]
        assert game in kit.games
        assert kit.setup.__module__ == module, game  # registered where the list says
        models = get_args(kit.experiment) or (kit.experiment,)  # a union, or one model
        assert kind_named(game).config in models, game


def test_each_mode_a_kit_makes_is_played_by_the_kits_live_class(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from turinglab.arena.modes.setups import setup_from_config

    seen = set()
    for path in sorted(CONFIGS.glob("*.yaml")):
        config = load_config(path)
        kit = kit_named(config.experiment.game)
        if kit is None:
            continue
        for agent in config.agents.values():  # hosted agents are built, never called
            if env := getattr(agent, "api_key_env", None):
                monkeypatch.setenv(env, "not-a-key")
        for mode in setup_from_config(config).modes:
            # the mode leads back to the kit that made it: its rebuild after a takeover too
            assert kit_named(mode.game.name) is kit, (path.name, mode.name)
            assert live_class(mode) is (kit.live_game or LiveGame), (path.name, mode.name)
            assert set(kind_named(mode.game.name).arena_modes) >= {mode.name}
        seen.add(config.experiment.game)
    assert seen == set(BUILTIN_KIT_MODULES), "a kit with no shipped config is untested"
    distinct = {kits()[g].live_game for g in ("strong", "gtt", "conversation", "live-itt")}
    assert len(distinct) == 4 and kits()["three-party"].live_game is None


def test_a_kind_without_a_kit_is_refused_with_the_kinds_served() -> None:
    with pytest.raises(ValueError, match="the arena plays conversation, gtt, live-itt, strong"):
        kit_for("itt-response")


def test_kits_load_lazily_one_module_per_kind() -> None:
    # A fresh interpreter: importing the setups loads no mode module but the interrogation
    # games' (they are the default); a lookup loads only the kind asked for.
    script = (
        "import sys\n"
        "import turinglab.arena.modes.setups as s\n"
        "from turinglab.arena.core.mode_kits import kit_named\n"
        "mods = lambda: sorted(m.rpartition('.')[2] for m in sys.modules"
        f" if m.rpartition('.')[2] in {sorted(KIT_MODULES)!r})\n"
        "print(mods())\n"
        "kit_named('gtt')\n"
        "print(mods())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert out == ["['engine_modes']", "['engine_modes', 'gtt_mode']"]


def _named_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module.rpartition(".")[2])
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name.rpartition(".")[2] for a in node.names)
    return found


def test_no_arena_module_outside_the_kits_imports_a_mode_module() -> None:
    named = {}
    for path in sorted(ARENA.rglob("*.py")):
        if path.stem in KIT_MODULES | OWN_MODULES | {"mode_kits"}:
            continue
        if hits := _named_imports(path) & (KIT_MODULES | OWN_MODULES):
            named[path.stem] = sorted(hits)
    # setups.py builds the zero-config default, an interrogation study, from its module.
    still = {"setups": ["engine_modes"]}
    assert named == still, "core, web and cluster code ask a kit (mode_kits.py), never a mode"


def test_the_frames_sent_whole_are_the_kits_state_frames() -> None:
    # The page's protocol (mirrored in static/protocol.js) and the cluster's relay name the
    # frame types sent whole; a kit with a new one must be added there, or pages mistake it.
    frame_types = {t.model_fields["type"].default for t in get_args(ServerFrame)}
    assert set(state_frames()) <= frame_types
    assert set(state_frames()) == set(page_protocol.WHOLE_VIEWS) == set(cluster.STATE_FRAMES)
    assert kits()["live-itt"].state_frame == "strong"  # the STT's transport
    assert kits()["three-party"].state_frame is None  # snapshot and message frames


def test_a_kinds_downloads_are_offered_for_its_studies_only() -> None:
    from turinglab.arena.modes.setups import setup_from_config

    live = setup_from_config(load_config(CONFIGS / "live-itt.yaml")).modes
    three = setup_from_config(load_config(CONFIGS / "three-party-offline.yaml")).modes
    assert [p for p, _ in downloads(live)] == ["/admin/export/live-itt.csv"]  # once, 2 modes
    assert downloads(three) == []

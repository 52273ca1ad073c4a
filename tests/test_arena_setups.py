"""What `serve` offers: the zero-setup default (embedded agents), a study config's modes, and
one clear error line for a config the arena cannot play."""

from __future__ import annotations

from pathlib import Path

import pytest

from turinglab.arena.serve import resolve_setup
from turinglab.config import load_config


def test_default_setup_uses_embedded_agents() -> None:
    setup = resolve_setup(None)
    assert [m.name for m in setup.modes] == ["three-party", "practice"]
    assert setup.modes[0].ai_agents == ("eliza", "smollm2") and setup.modes[1].solo
    assert setup.display_names["eliza"] == "ELIZA"
    assert setup.modes[0].verdict == "which" and setup.modes[1].verdict == "human-or-ai"


def test_study_config_becomes_study_and_practice_modes(tmp_path: Path) -> None:
    path = tmp_path / "study.yaml"
    path.write_text(
        "name: arena-study\n"
        "experiment:\n"
        "  game: two-party\n"
        "  interrogators: [eliza]\n"
        "  ai_witnesses: [{agent: eliza, persona: none, label: ELIZA-1966}]\n"
        "  time_limit_s: 120\n"
    )
    setup = resolve_setup(path)
    study, practice = setup.modes
    assert (study.name, study.duration_s, study.solo) == ("two-party", 120, False)
    assert practice.solo and setup.display_names["eliza"] == "ELIZA-1966"


def test_gtt_config_is_refused_in_one_line(tmp_path: Path) -> None:
    path = tmp_path / "gtt.yaml"
    path.write_text("name: g\nexperiment:\n  game: gtt\n  universe: [eliza, smollm2]\n")
    config = load_config(path)
    with pytest.raises(ValueError, match="strong and live-itt games, not 'gtt'"):
        resolve_setup(config)

"""What `serve` offers: the zero-setup default (embedded agents), a study config's modes, and
one clear error line for a config the arena cannot play."""

from __future__ import annotations

from pathlib import Path

import pytest

from turinglab.arena.web.serve import resolve_setup
from turinglab.config import load_config


def test_default_setup_uses_embedded_agents() -> None:
    setup = resolve_setup(None)
    assert [m.name for m in setup.modes] == ["three-party", "practice"]
    # The AI witness groups, as the study file names them; each seats its agent.
    assert setup.modes[0].ai_agents == ("ELIZA", "SMOLLM2-PERSONA") and setup.modes[1].solo
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


def test_gtt_config_offers_distinguish_act_and_watch() -> None:
    setup = resolve_setup(Path(__file__).parents[3] / "configs" / "gtt-offline.yaml")
    assert [m.name for m in setup.modes] == ["gtt-distinguish", "gtt-act", "gtt-watch"]
    assert all(m.solo and m.game.name == "gtt" for m in setup.modes)  # practice, never study
    assert set(setup.agents) == {"eliza", "smollm2", "gemma3-base"}
    assert {m.rules.max_distinguisher_turns for m in setup.modes} == {6}  # type: ignore[attr-defined]


def test_gtt_config_with_one_agent_cannot_offer_distinguishing(tmp_path: Path) -> None:
    path = tmp_path / "gtt.yaml"
    path.write_text("name: g\nexperiment:\n  game: gtt\n  universe: [eliza]\n")
    assert [m.name for m in resolve_setup(path).modes] == ["gtt-act", "gtt-watch"]


def test_conversation_config_serves_topic_conversations_and_others_are_refused() -> None:
    configs = Path(__file__).parents[3] / "configs"
    setup = resolve_setup(load_config(configs / "itt-conversations.yaml"))
    assert [m.name for m in setup.modes] == ["itt-conversation"]  # people in conversations
    with pytest.raises(ValueError, match=r"plays conversation, gtt, .* games, not 'itt-response'"):
        resolve_setup(load_config(configs / "itt-words.yaml"))

"""The live integrative test from a config file: `game: live-itt` names its AI agents (any
configured or embedded agent), exchange limits from the paper's {1, 5, 10, 20}, conditions and
stand-ins for practice; `serve` offers it, `run` refuses it in one line (it needs people)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_cli_errors import one_error_line, turinglab, write_config
from turinglab.arena.modes.live_itt_mode import LiveITTGame
from turinglab.arena.web.serve import resolve_setup
from turinglab.config import ConfigError, load_config, parse_config
from turinglab.games.live_itt import LiveITTExperiment

SHIPPED = Path(__file__).resolve().parents[2] / "configs" / "live-itt.yaml"


def live(**experiment: Any) -> dict[str, Any]:
    return {
        "name": "live",
        "agents": {"replay": {"kind": "scripted", "replies": ["hi"], "cycle": True}},
        "experiment": {"game": "live-itt", "ai_agents": ["eliza"], **experiment},
    }


def test_shipped_config_serves_a_study_and_a_practice_mode() -> None:
    config = load_config(SHIPPED)
    exp = config.experiment
    assert isinstance(exp, LiveITTExperiment)
    assert exp.exchange_limits == [1, 5, 10, 20] and exp.ai_agents == ["smollm2", "eliza"]
    assert sorted(config.used_agents()) == ["eliza", "person", "smollm2"]
    setup = resolve_setup(SHIPPED)
    study, practice = setup.modes
    assert (study.name, study.solo, practice.name, practice.solo) == (
        "live-itt",
        False,
        "live-itt-practice",
        True,
    )
    assert isinstance(study.game, LiveITTGame) and study.ai_agents == ("smollm2", "eliza")
    assert study.max_chars == 300 and study.duration_s is None
    assert sorted(setup.agents) == ["eliza", "person", "smollm2"]
    assert setup.display_names["eliza"] == "eliza"


def test_no_stand_ins_means_no_practice_mode() -> None:
    setup = resolve_setup(parse_config(live(exchange_limits=[5], conditions=["deceitful-human"])))
    (study,) = setup.modes
    assert study.spec_for is not None
    seats = {"judge": "person:j", "agent_a": "person:h", "agent_b": "eliza"}
    drawn = {study.spec_for(3, seats, seed).params["human_seat"] for seed in range(12)}
    assert drawn == {"agent_a", "agent_b"}  # the person's side comes from the session's seed
    spec = study.spec_for(3, seats, 11)
    p = spec.params
    assert p["exchanges"] == 5 and p["condition"] == "deceitful-human"
    assert spec.seats[p["human_seat"]] == "person:h" and spec.seats[p["ai_seat"]] == "eliza"
    assert spec.seats["judge"] == "person:j" and spec == study.spec_for(3, seats, 11)


def test_practice_seats_a_stand_in_as_the_human_agent() -> None:
    setup = resolve_setup(parse_config(live(stand_ins=["replay"])))
    practice = setup.mode("live-itt-practice")
    assert practice is not None and practice.solo and practice.spec_for is not None
    spec = practice.spec_for(0, {"judge": "person:j", "agent_a": "eliza", "agent_b": "eliza"}, 2)
    assert spec.seats[spec.params["human_seat"]] == "replay"
    assert spec.seats[spec.params["ai_seat"]] == "eliza"


@pytest.mark.parametrize(
    ("experiment", "needle"),
    [
        ({"ai_agents": ["eliza", "nobody"]}, "experiment.ai_agents[1]: unknown agent 'nobody'"),
        ({"stand_ins": ["ghost"]}, "experiment.stand_ins[0]: unknown agent 'ghost'"),
        ({"exchange_limits": [1, 2]}, "exchange_limits: [2] not allowed"),
        ({"exchange_limits": []}, "experiment.exchange_limits"),
        ({"exchange_limits": [5, 5]}, "exchange_limits: a value is listed twice"),
        ({"conditions": ["sneaky"]}, "experiment.conditions.0"),
        ({"ai_agents": []}, "experiment.ai_agents"),
        ({"stand_ins": ["eliza"]}, "agents both AI and stand-in: eliza"),
        ({"max_words": 0}, "experiment.max_words"),
        ({"turns": 3}, "experiment.turns"),
    ],
)
def test_bad_live_itt_config_names_the_field(experiment: dict[str, Any], needle: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_config(live(**experiment), "live.yaml")
    assert needle in str(err.value)


def test_unknown_game_lists_live_itt() -> None:
    with pytest.raises(ConfigError, match="live-itt"):
        parse_config({"name": "x", "experiment": {"game": "live-it"}})


def test_run_refuses_in_one_line(tmp_path: Path) -> None:
    done = turinglab("run", str(SHIPPED), "--store", str(tmp_path / "t.db"), cwd=tmp_path)
    one_error_line(done, "live-itt needs people: use `turinglab serve", "live-itt.yaml`")
    assert not (tmp_path / "t.db").exists()
    bad = write_config(tmp_path, live(ai_agents=["nobody"]))
    done = turinglab("run", str(bad), cwd=tmp_path)
    assert done.returncode == 2 and "experiment.ai_agents[0]: unknown agent 'nobody'" in done.stderr

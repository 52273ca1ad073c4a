"""Config validation and planning: clear errors, balanced designs, stable run identity."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from turinglab.config import ConfigError, load_config, parse_config
from turinglab.runner.plan import plan_trials, run_id


def base(**experiment) -> dict:
    return {
        "name": "t",
        "agents": {"a": {"kind": "scripted", "replies": ["x"]}, "b": {"kind": "eliza"}},
        "experiment": {"game": "gtt", "universe": ["a", "b"], "trials_per_pair": 4, **experiment},
    }


def test_every_ordered_pair_with_self_pairs_and_balance() -> None:
    specs = plan_trials(parse_config(base(trials_per_pair=4)))
    pairs = Counter((s.actor, s.distinguisher) for s in specs)
    assert pairs == {("a", "a"): 4, ("a", "b"): 4, ("b", "a"): 4, ("b", "b"): 4}
    for pair in pairs:
        branch = Counter(s.x_is_target for s in specs if (s.actor, s.distinguisher) == pair)
        assert branch == {True: 2, False: 2}
    assert [s.index for s in specs] == list(range(16))
    assert len({s.seed for s in specs}) == 16


def test_odd_n_balances_within_one() -> None:
    specs = plan_trials(parse_config(base(trials_per_pair=5)))
    for pair in {(s.actor, s.distinguisher) for s in specs}:
        selfs = sum(s.x_is_target for s in specs if (s.actor, s.distinguisher) == pair)
        assert selfs in (2, 3)


def test_plan_is_deterministic_and_seeded() -> None:
    a = plan_trials(parse_config(base(seed=3)))
    b = plan_trials(parse_config(base(seed=3)))
    c = plan_trials(parse_config(base(seed=4)))
    assert a == b
    assert [s.seed for s in a] != [s.seed for s in c]


def test_explicit_pairs() -> None:
    specs = plan_trials(parse_config(base(pairs=[["a", "b"]], trials_per_pair=2)))
    assert {(s.actor, s.distinguisher) for s in specs} == {("a", "b")}


def test_run_id_ignores_transport_but_not_design() -> None:
    cfg = base()
    cfg["agents"]["h"] = {"kind": "openai", "model": "m", "base_url": "http://x/v1"}
    cfg["experiment"]["universe"] = ["a", "h"]
    rid = run_id(parse_config(cfg))
    fast = {**cfg, "runner": {"max_trials_in_flight": 500, "max_calls_per_endpoint": 9}}
    fast["agents"] = {
        **cfg["agents"],
        "h": {**cfg["agents"]["h"], "timeout_s": 5, "max_concurrency": 3, "api_key_env": "K"},
    }
    assert run_id(parse_config(fast)) == rid
    hotter = {
        **cfg,
        "agents": {**cfg["agents"], "h": {**cfg["agents"]["h"], "params": {"temperature": 0.1}}},
    }
    assert run_id(parse_config(hotter)) != rid
    assert run_id(parse_config(base(trials_per_pair=5))) != run_id(parse_config(base()))


def test_run_id_changes_with_prompt_text(tmp_path: Path) -> None:
    prompt = tmp_path / "d.txt"
    prompt.write_text("Find out. <answer>1</answer>")
    cfg = parse_config(base(prompts={"distinguisher": str(prompt)}), base_dir=tmp_path)
    rid = run_id(cfg)
    prompt.write_text("Find out, please. <answer>1</answer>")
    assert run_id(cfg) != rid


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (
            lambda c: c["experiment"].update(universe=["a", "zz"]),
            "experiment.universe[1]: unknown agent 'zz'",
        ),
        (lambda c: c["experiment"].update(trials_per_pair=0), "experiment.trials_per_pair"),
        (lambda c: c["experiment"].update(game="chess"), "experiment.game"),
        (lambda c: c["agents"].update(x={"kind": "openai"}), "agents.x.model: Field required"),
        (lambda c: c["agents"].update(x={"kind": "telepathy"}), "agents.x.kind: unknown kind"),
        (lambda c: c["experiment"].update(pairs=[["a", "q"]]), "'q' is not in universe"),
        (lambda c: c.update(colour="red"), "colour"),
        (lambda c: c["experiment"].update(universe=["a", "a"]), "more than once"),
    ],
)
def test_bad_config_names_the_field(mutate, needle: str) -> None:
    cfg = base()
    mutate(cfg)
    with pytest.raises(ConfigError) as err:
        parse_config(cfg, "exp.yaml")
    assert needle in str(err.value)
    assert str(err.value).startswith("config error in exp.yaml")


def test_missing_prompt_file_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"experiment\.prompts\.actor: no such file"):
        parse_config(base(prompts={"actor": "nope.txt"}), "x.yaml", tmp_path)
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: [unclosed")
    with pytest.raises(ConfigError, match="not valid YAML"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read config"):
        load_config(tmp_path / "absent.yaml")


def test_shipped_configs_are_valid() -> None:
    from turinglab.arena.modes.setups import setup_from_config
    from turinglab.games.kinds import kind_named

    for path in Path(__file__).parents[2].joinpath("configs").glob("*.yaml"):
        config = load_config(path)
        kind = kind_named(config.experiment.game)
        if kind.needs_people:  # served, never run in batch
            modes = {mode.name for mode in setup_from_config(config).modes}
            assert modes and modes <= set(kind.arena_modes), (path, modes)
        else:
            assert plan_trials(config)


async def test_scripted_agent_replays_a_recorded_history(tmp_path: Path) -> None:
    import json

    from turinglab.agents.base import CallContext, ChatMessage
    from turinglab.agents.registry import build_agent

    recorded = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "hello, who is this?"},
        {"role": "user", "content": "a friend"},
        {"role": "assistant", "content": "oh nice"},
    ]
    (tmp_path / "h.json").write_text(json.dumps(recorded))
    (tmp_path / "r.txt").write_text("one\n\ntwo\n")
    cfg = base()
    cfg["agents"]["replay"] = {"kind": "scripted", "replies_file": "h.json"}
    cfg["agents"]["lines"] = {"kind": "scripted", "replies_file": "r.txt"}
    config = parse_config(cfg, "x.yaml", tmp_path)
    replay = build_agent("replay", config.agents["replay"])
    said = [ChatMessage("user", "hi"), ChatMessage("assistant", "hello, who is this?")]
    assert (await replay.reply(said[:1], CallContext(seed=0))).text == "hello, who is this?"
    assert (await replay.reply(said, CallContext(seed=0))).text == "oh nice"
    lines = build_agent("lines", config.agents["lines"])
    assert (await lines.reply(said, CallContext(seed=0))).text == "two"
    cfg["agents"]["lost"] = {"kind": "scripted", "replies_file": "nope.json"}
    with pytest.raises(ConfigError, match=r"agents\.lost\.replies_file: no such file"):
        parse_config(cfg, "x.yaml", tmp_path)

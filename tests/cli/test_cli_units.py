"""The pieces behind the CLI's error lines: run lookup, heartbeat status, strict YAML, prompt
placeholders, store checks, start-up cost."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from turinglab.config_yaml import YAMLProblem, explain_at, load_yaml
from turinglab.games.gtt_prompts import template_problem
from turinglab.store.location import StoreLocationError, check_store, parse_location
from turinglab.store.lookup import RunLookupError, pick_run, shown_status

SRC = Path(__file__).resolve().parents[2] / "src"


@dataclass(frozen=True)
class Run:
    id: str
    name: str
    status: str = "finished"
    created_at: float = 0.0
    updated_at: float = 0.0


def test_a_name_is_not_hidden_by_an_id_prefix() -> None:
    runs = [Run("4b9f00aa11", "baseline"), Run("77aa", "4b")]
    assert pick_run(runs, "4b", "db").id == "77aa"
    assert pick_run(runs, "4b9", "db").id == "4b9f00aa11"
    assert pick_run(runs, "4b9f00aa11", "db").name == "baseline"


def test_a_shared_name_lists_the_candidates() -> None:
    runs = [Run("aaa1", "exp", created_at=1e9), Run("bbb2", "exp", created_at=2e9)]
    with pytest.raises(RunLookupError) as err:
        pick_run(runs, "exp", "store.db")
    message = err.value.args[0]
    assert "2 runs in store.db are named 'exp'" in message
    assert "aaa1" in message and "bbb2" in message


def test_ambiguous_prefix_and_unknown_run() -> None:
    runs = [Run("ab1", "x"), Run("ab2", "y")]
    with pytest.raises(RunLookupError, match="matches 2 runs"):
        pick_run(runs, "ab", "db")
    with pytest.raises(RunLookupError, match="no run 'zz'"):
        pick_run(runs, "zz", "db")


def test_a_silent_running_run_is_shown_as_maybe_interrupted() -> None:
    now = 10_000.0
    assert shown_status(Run("a", "x", "running", updated_at=now - 5), now) == "running"
    stale = shown_status(Run("a", "x", "running", updated_at=now - 600), now)
    assert stale == "interrupted (last heartbeat 10 min ago)"
    assert shown_status(Run("a", "x", "finished", updated_at=0), now) == "finished"


def test_strict_yaml_refuses_duplicates_and_non_text_keys() -> None:
    with pytest.raises(YAMLProblem, match=r"key 'a' appears twice \(lines 1 and 3\)"):
        load_yaml("a: 1\nb: 2\na: 3\n")
    with pytest.raises(YAMLProblem, match="as the boolean false; quote it"):
        load_yaml("agents:\n  no: {kind: eliza}\n")
    with pytest.raises(YAMLProblem, match="as the number 12"):
        load_yaml("agents:\n  12: {kind: eliza}\n")
    data, _root = load_yaml("agents:\n  'no': {kind: eliza}\n")
    assert data == {"agents": {"no": {"kind": "eliza"}}}


def test_explain_names_what_yaml_did_to_a_value() -> None:
    _data, root = load_yaml("experiment:\n  universe: [eliza, on, 3.0, 'off']\n")
    assert explain_at(root, ("experiment", "universe", 1)) == (
        "YAML read `on` (line 2) as the boolean true; quote it ('on') to mean the text"
    )
    assert "as the number 3.0" in str(explain_at(root, ("experiment", "universe", 2)))
    assert explain_at(root, ("experiment", "universe", 3)) is None  # quoted: text as meant
    assert explain_at(root, ("experiment", "universe", 0)) is None


def test_prompt_templates() -> None:
    assert template_problem("actor", "Be human. They said: $first_message") is None
    assert "missing placeholder(s) $first_message" in str(template_problem("actor", "Be human."))
    assert "unknown placeholder(s) $first_mesage" in str(template_problem("actor", "$first_mesage"))
    assert template_problem("distinguisher", "Costs $$5. You have ${max_turns} turns.") is None


def test_store_checks(tmp_path: Path) -> None:
    assert parse_location("x.db").kind == "sqlite"
    assert parse_location("postgres://u@h/db").kind == "postgresql"
    check_store(str(tmp_path / "new.db"), create=True)  # a new file in an existing folder: fine
    assert not (tmp_path / "new.db").exists()  # checking creates nothing
    with pytest.raises(StoreLocationError, match="does not exist"):
        check_store(str(tmp_path / "new.db"), create=False)
    (tmp_path / "empty.db").write_bytes(b"")
    # An empty file is an empty database: a new store for `run`, nothing to read from.
    check_store(str(tmp_path / "empty.db"), create=True)
    with pytest.raises(StoreLocationError, match=r"not a Turing Lab store: .*\(no tables\)"):
        check_store(str(tmp_path / "empty.db"), create=False)
    assert (tmp_path / "empty.db").read_bytes() == b""
    with pytest.raises(StoreLocationError, match="unsupported scheme 'redis://'"):
        parse_location("redis://localhost")


def test_help_is_cheap_and_imports_no_heavy_module() -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    probe = (
        "import sys, turinglab.cli; "
        "print(sorted(m for m in ('pandas', 'scipy', 'sqlalchemy', 'matplotlib', "
        "'turinglab.runner.execute') if m in sys.modules))"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert loaded.stdout.strip() == "[]"
    best = min(_cpu_of_help(env) for _ in range(3))
    assert best < 1.0, best  # 0.2 s on an idle machine


def _cpu_of_help(env: dict[str, str]) -> float:
    """CPU seconds `turinglab --help` used: its cost, whatever else shares the machine (wall
    time on a busy 2-core machine measured the neighbours)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(
        [sys.executable, "-m", "turinglab", "--help"], env=env, check=True, capture_output=True
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def test_public_api_stays_available_lazily() -> None:
    import turinglab

    assert turinglab.load_config.__name__ == "load_config"
    assert turinglab.Store.__name__ == "Store"
    with pytest.raises(AttributeError):
        _ = turinglab.no_such_name  # type: ignore[attr-defined]


def test_tagger_mode_names_match_the_tagger() -> None:
    from turinglab.cli.tagging import TAGGER_MODE_NAMES
    from turinglab.tagging.llm_tagger import TAGGER_MODES

    assert TAGGER_MODE_NAMES == TAGGER_MODES

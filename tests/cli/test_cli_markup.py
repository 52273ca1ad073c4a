"""User text is never Rich markup (issue 32): names and paths such as `x[/]y` or `[/bad].db`
are printed as given, in one line, and a bracketed name is not swallowed."""

from __future__ import annotations

from pathlib import Path

import yaml

from test_cli_errors import CONFIG, turinglab


def one_line_error(done, *needles: str) -> None:  # type: ignore[no-untyped-def]
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2 and len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and "Traceback" not in done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]


def test_brackets_in_names_and_paths_are_printed_as_given(tmp_path: Path) -> None:
    one_line_error(turinglab("runs", "--store", "[/bad].db", cwd=tmp_path), "[/bad].db")
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({**CONFIG, "name": "x[/]y"}))
    done = turinglab("run", str(config), "--store", "s.db", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    listed = turinglab("runs", "--store", "s.db", cwd=tmp_path)
    assert listed.returncode == 0 and "x[/]y" in listed.stdout, listed.stderr
    one_line_error(
        turinglab("report", "[bold red]zz", "--store", "s.db", cwd=tmp_path), "[bold red]zz"
    )
    before = sorted(p.name for p in tmp_path.iterdir())
    one_line_error(turinglab("export", "[/x]", "--store", "s.db", cwd=tmp_path), "'[/x]'")
    assert sorted(p.name for p in tmp_path.iterdir()) == before  # nothing written

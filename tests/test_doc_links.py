"""Every relative link in README.md and docs/*.md points at a file that exists, and every
`#anchor` at a heading of that file (as GitHub names headings), so moving text between the
README and docs/ cannot leave a dead link behind."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^(```|~~~).*?^\1", re.S | re.M)
CODE_SPAN = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text without code blocks and code spans (a link written there is not a link)."""
    return CODE_SPAN.sub("", FENCE.sub("", text))


def links(text: str) -> list[str]:
    return LINK.findall(prose(text))


def anchor(heading: str) -> str:
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|!?\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        name, n = anchor(heading), 1
        while name in found:  # repeated headings get -1, -2, …
            name, n = f"{anchor(heading)}-{n}", n + 1
        found.add(name)
    return found


def dead_links(page: Path, root: Path = ROOT) -> list[str]:
    dead = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: …: not a file here
            continue
        path, _, fragment = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            dead.append(f"{target}: no file {os.path.relpath(file, root)}")
        elif fragment and file.suffix == ".md" and fragment not in anchors(file):
            dead.append(f"{target}: no heading #{fragment} in {os.path.relpath(file, root)}")
    return dead


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page: Path) -> None:
    assert links(page.read_text(encoding="utf-8")) or page.name != "README.md"
    assert dead_links(page) == []


def test_a_dead_link_or_anchor_is_reported(tmp_path: Path) -> None:
    there = "# The paper's own data (`itt import`)\n\n## Twice\n## Twice\n"
    (tmp_path / "there.md").write_text(there)
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](there.md) [ok](there.md#the-papers-own-data-itt-import) [ok](there.md#twice-1)\n"
        "[web](https://example.org/x) ![img](missing.png) [gone](there.md#nowhere)\n"
        "`[in code](nothing.md)`\n```\n[in a block](nothing.md)\n```\n"
    )
    assert dead_links(page, tmp_path) == [
        "missing.png: no file missing.png",
        "there.md#nowhere: no heading #nowhere in there.md",
    ]

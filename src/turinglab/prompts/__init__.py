"""Role instructions as text templates. Users override any of them with a file of their own.

Templates use `$name` placeholders (string.Template), so braces in a user's prompt are safe.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from string import Template


def builtin_prompt(name: str, folder: str | None = None) -> str:
    """The built-in template `name`; from a named set's sub-folder when `folder` is given."""
    root = resources.files(__package__)
    path = root / folder / f"{name}.txt" if folder else root / f"{name}.txt"
    return path.read_text(encoding="utf-8")


def has_builtin_prompt(name: str, folder: str | None = None) -> bool:
    root = resources.files(__package__)
    return (root / folder / f"{name}.txt" if folder else root / f"{name}.txt").is_file()


def load_prompt(name: str, override: Path | None = None, folder: str | None = None) -> str:
    """The override file's text when given, else the built-in template `name`."""
    if override is not None:
        return override.read_text(encoding="utf-8")
    return builtin_prompt(name, folder)


def render(template: str, **values: object) -> str:
    """Fill `$name` placeholders; unknown `$words` are left alone rather than raising."""
    return Template(template).safe_substitute(values).strip()


def placeholders(template: str) -> set[str]:
    """The `$name` / `${name}` placeholders a template uses (`$$` is a literal dollar)."""
    found = set()
    for match in Template.pattern.finditer(template):
        name = match.group("named") or match.group("braced")
        if name:
            found.add(name)
    return found

"""Codebooks: fixed sets of codes, grouped in categories, read from YAML files.

The built-in codebooks ship in `codebooks/` beside this module (strategies, reasons, gtt_probes);
a user may pass the path of their own YAML file of the same shape:

    name: my-book
    task: one sentence telling a tagger what to look at (optional)
    categories:
      - name: Category
        codes:
          - {id: some-code, label: Some code, description: one line}
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

BUILTIN_CODEBOOKS = ("strategies", "reasons", "gtt_probes")
DEFAULT_TASK = "Read the text below and decide whether the code named in the question applies."
SLUG = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TOP_KEYS = {"name", "task", "categories"}
_CATEGORY_KEYS = {"name", "codes"}
_CODE_KEYS = {"id", "label", "description"}


class CodebookError(ValueError):
    """A codebook file is missing, unreadable or not of the expected shape."""


@dataclass(frozen=True, slots=True)
class Code:
    id: str
    label: str
    category: str
    description: str


@dataclass(frozen=True, slots=True)
class Codebook:
    name: str
    task: str
    codes: tuple[Code, ...]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.codes)

    @property
    def categories(self) -> tuple[str, ...]:
        """Category names in file order."""
        return tuple(dict.fromkeys(c.category for c in self.codes))

    def in_category(self, category: str) -> tuple[Code, ...]:
        return tuple(c for c in self.codes if c.category == category)

    def code(self, code_id: str) -> Code:
        for c in self.codes:
            if c.id == code_id:
                return c
        raise KeyError(f"codebook {self.name!r} has no code {code_id!r}")

    def category_of(self, code_id: str) -> str:
        return self.code(code_id).category


def _require_str(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise CodebookError(f"{where}: expected a non-empty string, got {value!r}")
    return value.strip()


def _check_keys(item: Any, allowed: set[str], required: set[str], where: str) -> dict[str, Any]:
    if not isinstance(item, dict):
        raise CodebookError(f"{where}: expected a mapping, got {type(item).__name__}")
    unknown = set(item) - allowed
    if unknown:
        raise CodebookError(
            f"{where}: unknown field(s) {sorted(unknown)}; allowed {sorted(allowed)}"
        )
    missing = required - set(item)
    if missing:
        raise CodebookError(f"{where}: missing field(s) {sorted(missing)}")
    return item


def parse_codebook(data: Any, source: str = "<codebook>") -> Codebook:
    """A validated Codebook from already-parsed YAML/JSON data; CodebookError names the field."""
    top = _check_keys(data, _TOP_KEYS, {"name", "categories"}, source)
    name = _require_str(top["name"], f"{source}: name")
    task = _require_str(top["task"], f"{source}: task") if "task" in top else DEFAULT_TASK
    categories = top["categories"]
    if not isinstance(categories, list) or not categories:
        raise CodebookError(f"{source}: categories: expected a non-empty list")
    codes: list[Code] = []
    seen_ids: set[str] = set()
    seen_categories: set[str] = set()
    for ci, cat in enumerate(categories):
        where = f"{source}: categories[{ci}]"
        cat = _check_keys(cat, _CATEGORY_KEYS, _CATEGORY_KEYS, where)
        cat_name = _require_str(cat["name"], f"{where}.name")
        if cat_name in seen_categories:
            raise CodebookError(f"{where}.name: category {cat_name!r} appears twice")
        seen_categories.add(cat_name)
        if not isinstance(cat["codes"], list) or not cat["codes"]:
            raise CodebookError(f"{where}.codes: expected a non-empty list")
        for ki, raw in enumerate(cat["codes"]):
            cwhere = f"{where}.codes[{ki}]"
            raw = _check_keys(raw, _CODE_KEYS, _CODE_KEYS, cwhere)
            code_id = _require_str(raw["id"], f"{cwhere}.id")
            if not SLUG.match(code_id):
                raise CodebookError(
                    f"{cwhere}.id: {code_id!r} is not a slug (lowercase letters, digits, hyphens)"
                )
            if code_id in seen_ids:
                raise CodebookError(f"{cwhere}.id: code {code_id!r} appears twice")
            seen_ids.add(code_id)
            codes.append(
                Code(
                    id=code_id,
                    label=_require_str(raw["label"], f"{cwhere}.label"),
                    category=cat_name,
                    description=_require_str(raw["description"], f"{cwhere}.description"),
                )
            )
    return Codebook(name=name, task=task, codes=tuple(codes))


def load_codebook(name_or_path: str | Path) -> Codebook:
    """A built-in codebook by name ('strategies', 'reasons', 'gtt_probes') or a YAML file."""
    if isinstance(name_or_path, str) and name_or_path in BUILTIN_CODEBOOKS:
        ref = resources.files("turinglab.tagging") / "codebooks" / f"{name_or_path}.yaml"
        text, source = ref.read_text(encoding="utf-8"), f"{name_or_path}.yaml"
    else:
        path = Path(name_or_path)
        if not path.is_file():
            raise CodebookError(
                f"codebook {str(name_or_path)!r}: neither a built-in codebook "
                f"({', '.join(BUILTIN_CODEBOOKS)}) nor an existing file"
            )
        text, source = path.read_text(encoding="utf-8"), str(path)
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise CodebookError(f"{source}: not valid YAML: {err}") from None
    return parse_codebook(data, source)

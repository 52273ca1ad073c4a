"""Optional extras: heavy dependencies a feature needs, named in one line when missing.

The core install (engine, runner, store, analysis, reports, hosted agents, ELIZA) compiles
nothing and pulls no torch. Local llama.cpp models, the ITT judges and the browser arena come
with extras (pyproject.toml); a feature imports its extra's modules through `require`, so a user
without the extra reads which one to install instead of a traceback.
"""

from __future__ import annotations

from importlib import import_module
from importlib.util import find_spec
from types import ModuleType

# extra -> what it is for, as the one-line message says it
EXTRAS: dict[str, str] = {
    "local": "local llama.cpp models",
    "itt": "integrative Turing tests (embeddings, spaCy, BLEU/CIDEr, AI judges)",
    "arena": "the browser arena",
}
# The modules an entry point checks before it starts (`require_extra`); keep in step with
# pyproject.toml's [project.optional-dependencies].
EXTRA_MODULES: dict[str, tuple[str, ...]] = {
    "local": ("llama_cpp",),
    "itt": ("sentence_transformers", "sklearn", "spacy", "lemminflect", "wordfreq", "sacrebleu"),
    "arena": ("fastapi", "uvicorn", "websockets", "redis"),
}


class MissingExtra(ImportError):
    """A feature's optional dependency is not installed; the message is the one line to show."""

    def __init__(self, extra: str, feature: str, module: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(
            f"{feature} needs the {extra!r} extra (module {module!r} is not installed): "
            f"pip install 'turinglab[{extra}]'",
            name=module,
        )


def require(extra: str, module: str, feature: str | None = None) -> ModuleType:
    """Import `module`, or raise MissingExtra naming `extra` when it (or a package it needs)
    is not installed. An ImportError from inside an installed module is a bug: it propagates."""
    if extra not in EXTRAS:
        raise ValueError(f"unknown extra {extra!r} (known: {', '.join(EXTRAS)})")
    try:
        return import_module(module)
    except ModuleNotFoundError as err:
        if err.name is None or _ours(err.name):  # a module of ours missing is a bug
            raise
        raise MissingExtra(extra, feature or EXTRAS[extra], err.name) from None


def _ours(name: str) -> bool:
    return name == "turinglab" or name.startswith("turinglab.")


def require_extra(extra: str, feature: str | None = None) -> None:
    """Check, without importing them, that every module of `extra` is installed: an entry point
    (`turinglab serve`) says what is missing before it starts anything."""
    for module in EXTRA_MODULES[extra]:
        try:
            found = find_spec(module) is not None
        except ModuleNotFoundError:  # a finder that refuses the name: not installed either
            found = False
        if not found:
            raise MissingExtra(extra, feature or EXTRAS[extra], module)

"""Opening a study from the admin page: a config file under the allowed folder, or pasted YAML.

The config goes through the same validation as `turinglab run` and `turinglab serve CONFIG`,
so its errors read the same. Admin forms are plain urlencoded POSTs (no multipart dependency)
and carry a per-server CSRF token; a browser's Origin, when sent, must be this server.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import parse_qs

from fastapi import Request

from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.http.request_body import BodyTooLarge, bounded_body
from turinglab.arena.modes.setups import setup_from_config
from turinglab.arena.web.admin_files import confined_to
from turinglab.arena.web.admin_keys import KeyAllowlist
from turinglab.config import ConfigError, Experiment, ExperimentConfig, load_config, parse_config
from turinglab.config_yaml import YAMLProblem, load_yaml

MAX_FORM_BYTES = 256 * 1024
MAX_ROUNDS = 100
CONFIG_SUFFIXES = (".yaml", ".yml")


class AdminFormError(ValueError):
    """A bad admin form; the message is shown (escaped) on the admin page."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class OpenedStudy:
    setup: ArenaSetup
    source: str  # what the admin page says the study came from
    experiment: Experiment | None = None  # the config's (witnesses timed: admin_routes.py)


async def read_form(request: Request, csrf: str) -> dict[str, str]:
    """The posted fields, after the CSRF checks: the token always; the Origin when the browser
    names one (under our no-referrer policy Chromium sends "null" for form posts)."""
    origin = request.headers.get("origin")
    named = origin not in (None, "null")
    if named and str(origin).split("://", 1)[-1] != request.headers.get("host"):
        raise AdminFormError("refused: the form was posted from another site", 403)
    kind = request.headers.get("content-type", "").split(";")[0].strip()
    if kind != "application/x-www-form-urlencoded":
        raise AdminFormError(f"expected a form post, not {kind or 'no content type'}", 415)
    try:
        body = await bounded_body(request, MAX_FORM_BYTES)  # not read whole first
    except BodyTooLarge:
        raise AdminFormError(f"the form is larger than {MAX_FORM_BYTES // 1024} KiB", 413) from None
    fields = {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace")).items()}
    if not secrets.compare_digest(fields.get("csrf", "").encode(), csrf.encode()):
        raise AdminFormError("refused: the form's token is missing or stale; reload /admin", 403)
    return fields


def open_study(
    fields: dict[str, str], studies_dir: Path | None, keys: KeyAllowlist | None = None
) -> OpenedStudy:
    """Validate the form and build the study's setup (this may load models: call it off the
    event loop). `keys`: the API-key variables its agents may use (None: none)."""
    keys = keys or KeyAllowlist()
    path, text = fields.get("path", "").strip(), fields.get("yaml", "").strip()
    if path and text:
        raise AdminFormError("give a config file or pasted YAML, not both")
    if path:
        config, source = _from_file(path, studies_dir, keys)
    elif text:
        config, source = _from_text(text, studies_dir, keys), "pasted YAML"
    else:
        raise AdminFormError("give a config file (path) or paste the config's YAML")
    rounds = _rounds(fields.get("rounds", "").strip())
    try:
        setup = setup_from_config(config)
    except ValueError as err:
        raise AdminFormError(f"{source}: {err}") from None
    seed = config.experiment.seed
    update: dict[str, int] = {"seed": seed} | ({"rounds": rounds} if rounds else {})
    settings = setup.settings.model_copy(update=update)
    return OpenedStudy(replace(setup, settings=settings), source, config.experiment)


def _admin_checks(
    root: Path | None, base_dir: Path | None, source: str, keys: KeyAllowlist
) -> Callable[[ExperimentConfig], None]:
    """What a config from /admin must pass before anything in it is opened or built: its
    files inside the studies folder (admin_files.py), its API keys allowed (admin_keys.py)."""
    files = confined_to(root, base_dir, source)

    def check(config: ExperimentConfig) -> None:
        files(config)
        keys.check(config, source)

    return check


def _from_file(
    path: str, studies_dir: Path | None, keys: KeyAllowlist
) -> tuple[ExperimentConfig, str]:
    if studies_dir is None:
        raise AdminFormError("this server allows no config folder: paste the YAML instead")
    root = studies_dir.resolve()
    full = (root / path).resolve()
    if not full.is_relative_to(root):
        raise AdminFormError(f"{path}: not inside the allowed folder {root}")
    if full.suffix.lower() not in CONFIG_SUFFIXES:
        raise AdminFormError(f"{path}: a study config is a .yaml or .yml file")
    if not full.is_file():
        raise AdminFormError(f"{path}: no such file in {root}")
    try:
        check = _admin_checks(root, full.parent, path, keys)
        return load_config(full, check), str(full.relative_to(root))
    except ConfigError as err:
        raise AdminFormError(str(err)) from None


def _from_text(text: str, studies_dir: Path | None, keys: KeyAllowlist) -> ExperimentConfig:
    try:
        data, root = load_yaml(text)
        check = _admin_checks(studies_dir, studies_dir, "pasted YAML", keys)
        return parse_config(data, "pasted YAML", studies_dir, _root=root, check=check)
    except YAMLProblem as err:
        raise AdminFormError(f"config error in pasted YAML: {err}") from None
    except ConfigError as err:
        raise AdminFormError(str(err)) from None


def _rounds(given: str) -> int | None:
    if not given:
        return None
    if not given.isdigit() or not 1 <= int(given) <= MAX_ROUNDS:
        raise AdminFormError(f"rounds: a whole number from 1 to {MAX_ROUNDS}, not {given!r}")
    return int(given)

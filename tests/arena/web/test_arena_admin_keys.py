"""A study config opened from /admin may read only the API-key variables the operator allows
(`serve --allow-key-env NAME=BASE_URL`, and the start-up config's own), and send each only to
its base URLs: otherwise an `openai` agent with `api_key_env: TURINGLAB_ARENA_SECRET` and a
`base_url` of the admin's own host would post the server's secrets there."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, make_setup, running_arena
from test_cli_errors import turinglab
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.web.admin_keys import KeyAllowlist
from turinglab.config import ConfigError, parse_config
from turinglab.store.database import Store

pytestmark = pytest.mark.server

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
LAB_URL = "http://127.0.0.1:9/v1"  # never called: the studies below skip the witness preflight


def study(env: str, url: str = LAB_URL) -> str:
    return f"""\
name: pilot
agents:
  m: {{kind: openai, model: gpt-x, base_url: "{url}", api_key_env: {env}}}
experiment:
  game: two-party
  interrogators: [eliza]
  ai_witnesses: [{{agent: m, persona: none, label: M}}]
  time_limit_s: 120
arena: {{witness_timing: skip}}  # about keys and URLs, not timing: nothing answers at :9
"""


async def open_pasted(base: str, text: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http:
        async with http.get(base + "/admin", headers=AUTH) as r:
            found = re.search(r'name="csrf" value="([^"]+)"', await r.text())
        assert found is not None
        data = {"csrf": found.group(1), "yaml": text}
        async with http.post(
            base + "/admin/study", data=data, headers=AUTH, allow_redirects=False
        ) as r:
            return r.status, await r.text()


async def test_admin_configs_use_only_the_allowed_key_variables_and_urls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURINGLAB_ARENA_SECRET", "the-session-signing-secret")
    monkeypatch.setenv("LAB_OPENAI_KEY", "lab-key")
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    keys = KeyAllowlist.parse([f"LAB_OPENAI_KEY={LAB_URL}/"])
    with running_arena(setup, store=kept, studies_dir=tmp_path, admin_keys=keys) as (base, app):
        status, page = await open_pasted(base, study("TURINGLAB_ARENA_SECRET"))
        assert status == 400
        assert (
            "agents.m.api_key_env: a config opened from /admin may use only the API-key "
            "variables the server allows (LAB_OPENAI_KEY;"
        ) in page
        assert "not TURINGLAB_ARENA_SECRET" in page and "the-session-signing-secret" not in page
        status, page = await open_pasted(base, study("LAB_OPENAI_KEY", "https://evil.example/v1"))
        assert status == 400
        assert (
            f"agents.m.base_url: the key in LAB_OPENAI_KEY may be sent only to {LAB_URL}, "
            "not https://evil.example/v1"
        ) in page
        assert app.state.arena.setup is setup  # nothing was opened

        status, page = await open_pasted(base, study("LAB_OPENAI_KEY"))
        assert status == 303, page
        assert app.state.arena.setup is not setup
    kept.close()


async def test_by_default_no_key_variable_is_allowed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TURINGLAB_ANYTHING", "x")
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    with running_arena(setup, store=kept, studies_dir=tmp_path) as (base, app):
        for env in ("TURINGLAB_ANYTHING", "HOME"):
            status, page = await open_pasted(base, study(env))
            assert status == 400
            assert f"the server allows (none; turinglab serve --allow-key-env NAME=BASE_URL " \
                f"adds one), not {env}" in page  # fmt: skip
        (tmp_path / "chosen.yaml").write_text(study("HOME"))  # chosen from the folder: the same
        async with aiohttp.ClientSession() as http:
            async with http.get(base + "/admin", headers=AUTH) as r:
                token = re.search(r'name="csrf" value="([^"]+)"', await r.text())
            assert token is not None
            data = {"csrf": token.group(1), "path": "chosen.yaml"}
            async with http.post(base + "/admin/study", data=data, headers=AUTH) as r:
                assert r.status == 400 and "agents.m.api_key_env" in await r.text()
        assert app.state.arena.setup is setup
    kept.close()


def test_the_start_up_configs_own_keys_stay_allowed_and_bad_flags_are_one_line(
    tmp_path: Path,
) -> None:
    import yaml

    config = parse_config(yaml.safe_load(study("LAB_OPENAI_KEY")), "study.yaml", tmp_path)
    allowed = KeyAllowlist().with_config(config)
    allowed.check(config, "study.yaml")  # the operator's own pair: reopening it works
    assert allowed.allowed == {"LAB_OPENAI_KEY": frozenset({LAB_URL})}
    assert KeyAllowlist.parse(["K", "K=https://a/v1"]).allowed == {"K": None}  # NAME: any URL
    with pytest.raises(ValueError, match="the base URL must be"):
        KeyAllowlist.parse(["K=ftp://x"])

    done = turinglab("serve", "--allow-key-env", "not a name", "--port", "1", cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "error: --allow-key-env 'not a name': give NAME or NAME=BASE_URL"
    ]
    assert list(tmp_path.iterdir()) == []  # nothing written (no store)


def keyless(url: str) -> str:
    """A study whose witness has no key: the server still posts to its base URL."""
    return study("LAB_OPENAI_KEY", url).replace(", api_key_env: LAB_OPENAI_KEY", "")


async def test_admin_configs_reach_only_the_base_urls_the_operator_allows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Server-side request forgery: a keyless model aimed at the cloud's metadata service or a
    service on the server's own network is refused; the operator's URLs open."""
    monkeypatch.setenv("LAB_OPENAI_KEY", "lab-key")
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    keys = KeyAllowlist.parse(["LAB_OPENAI_KEY"], ["http://127.0.0.1:9/v1/"])
    with running_arena(setup, store=kept, studies_dir=tmp_path, admin_keys=keys) as (base, app):
        for url in (
            "http://169.254.169.254/latest/meta-data",
            "http://127.0.0.1:6379",
            "http://127.0.0.1:9/v1/../../admin",  # compared whole: no path trick
            "http://127.0.0.1:9@10.0.0.1/v1",  # nor user-info
        ):
            status, page = await open_pasted(base, keyless(url))
            assert status == 400, url
            line = (
                "config error in pasted YAML: agents.m.base_url: a config opened from /admin "
                "may use only the base URLs the server allows (http://127.0.0.1:9/v1; "
                f"turinglab serve --allow-base-url URL adds one), not {url}"
            )
            assert line in page, url
        # A key allowed to go anywhere goes only where the server allows too.
        status, page = await open_pasted(base, study("LAB_OPENAI_KEY", "http://10.0.0.1/v1"))
        assert status == 400 and "agents.m.base_url: a config opened from /admin" in page
        assert app.state.arena.setup is setup  # nothing was opened

        status, page = await open_pasted(base, keyless("http://127.0.0.1:9/v1"))
        assert status == 303, page
        assert app.state.arena.setup is not setup
    kept.close()


def test_the_start_up_configs_base_urls_stay_allowed() -> None:
    import yaml

    config = parse_config(yaml.safe_load(keyless("http://lab-gpu:8000/v1")), "s.yaml")
    KeyAllowlist().with_config(config).check(config, "s.yaml")  # reopening the operator's own
    with pytest.raises(ConfigError, match=r"agents\.m\.base_url: .*allows \(none;"):
        KeyAllowlist().check(config, "s.yaml")
    # --allow-key-env's URLs count as allowed base URLs (for keyless models too).
    KeyAllowlist.parse(["K=http://lab-gpu:8000/v1"]).check(config, "s.yaml")
    with pytest.raises(ValueError, match="--allow-base-url 'ftp://x': give an http"):
        KeyAllowlist.parse([], ["ftp://x"])


def test_serve_refuses_a_bad_allow_base_url_in_one_line(tmp_path: Path) -> None:
    done = turinglab("serve", "--allow-base-url", "lab-gpu:8000", "--port", "1", cwd=tmp_path)
    assert done.returncode != 0
    assert done.stderr.strip().splitlines() == [
        "error: --allow-base-url 'lab-gpu:8000': give an http(s)://… base URL"
    ]
    assert list(tmp_path.iterdir()) == []

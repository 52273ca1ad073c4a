"""A study config opened from /admin names files only inside the studies folder (resolved,
symlinks followed), and a local model file must be GGUF: no other file on the server can be
read through it (issue 32: a scripted witness replayed /etc/hostname)."""

from __future__ import annotations

import re
from pathlib import Path

import aiohttp

from arena_fixtures import ADMIN_PASSWORD, make_setup, running_arena
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}


def study(agent: str) -> str:
    return f"""\
name: pilot
agents:
  m: {agent}
experiment:
  game: two-party
  interrogators: [eliza]
  ai_witnesses: [{{agent: m, persona: none, label: M}}]
  time_limit_s: 120
"""


async def test_configs_from_admin_name_files_only_inside_the_studies_folder(
    tmp_path: Path,
) -> None:
    studies = tmp_path / "studies"
    studies.mkdir()
    (studies / "replies.txt").write_text("hello from inside\n")
    (studies / "fake.gguf").write_text("not a model at all\n")
    (tmp_path / "secret.txt").write_text("outside the folder\n")
    (studies / "link.txt").symlink_to(tmp_path / "secret.txt")
    (studies / "link.gguf").symlink_to("/etc/hostname")
    (studies / "chosen.yaml").write_text(study("{kind: scripted, replies_file: ../secret.txt}"))
    (studies / "good.yaml").write_text(study("{kind: scripted, replies_file: replies.txt}"))
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    with running_arena(setup, store=kept, studies_dir=studies) as (base, app):
        url = base + "/admin/study"
        async with aiohttp.ClientSession() as http:
            async with http.get(base + "/admin", headers=AUTH) as r:
                found = re.search(r'name="csrf" value="([^"]+)"', await r.text())
            assert found is not None
            token = found.group(1)

            async def opened(**fields: str) -> tuple[int, str]:
                async with http.post(
                    url, data={"csrf": token, **fields}, headers=AUTH, allow_redirects=False
                ) as r:
                    return r.status, await r.text()

            refused = [
                study("{kind: scripted, replies_file: /etc/hostname}"),
                study("{kind: scripted, replies_file: ../secret.txt}"),
                study("{kind: scripted, replies_file: link.txt}"),  # a symlink out
                study("{kind: local, model: /etc/shadow}"),
                study("{kind: local, model: " + str(studies / "link.gguf") + "}"),
            ]
            for text in refused:
                status, page = await opened(yaml=text)
                assert status == 400, page
                assert "only name files inside the studies folder" in page
                assert "outside the folder" not in page
            status, page = await opened(path="chosen.yaml")
            assert status == 400 and "only name files inside the studies folder" in page
            gtt = (
                "name: g\nexperiment:\n  game: gtt\n  universe: [eliza]\n"
                "  prompts: {distinguisher: /etc/hostname}\n"
            )
            status, page = await opened(yaml=gtt)
            assert status == 400 and "experiment.prompts.distinguisher" in page, page
            status, page = await opened(
                yaml=study("{kind: local, model: " + str(studies / "fake.gguf") + "}")
            )
            assert status == 400 and "not a GGUF model file" in page
            assert app.state.arena.setup is setup  # nothing was opened

            # Files inside the folder are fine, pasted or chosen.
            status, page = await opened(path="good.yaml")
            assert status == 303, page
            inside = study("{kind: scripted, replies_file: replies.txt}")
            status, page = await opened(yaml=inside)
            assert status == 303, page
        assert app.state.arena.setup is not setup


async def test_without_a_studies_folder_a_pasted_config_names_no_file(tmp_path: Path) -> None:
    (tmp_path / "replies.txt").write_text("hi\n")
    setup = make_setup()
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    with running_arena(setup, store=kept) as (base, _):
        async with aiohttp.ClientSession() as http:
            async with http.get(base + "/admin", headers=AUTH) as r:
                found = re.search(r'name="csrf" value="([^"]+)"', await r.text())
            assert found is not None
            text = study("{kind: scripted, replies_file: " + str(tmp_path / "replies.txt") + "}")
            data = {"csrf": found.group(1), "yaml": text}
            async with http.post(base + "/admin/study", data=data, headers=AUTH) as r:
                assert r.status == 400
                assert "no folder is allowed" in await r.text()

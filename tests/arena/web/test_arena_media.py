"""Images kept in the store: content-addressed rows, referenced from the messages that carried
them, exported by reference and served (behind the admin password) by any server on the store;
and which agents are sent images, as the config says."""

from __future__ import annotations

import aiohttp
import pytest
from sqlalchemy import func, select

from arena_fixtures import ADMIN_PASSWORD, Person, running_arena
from test_arena_strong import png, state, strong_setup, upload
from turinglab.agents.base import ImagePart
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.agents.registry import build_agent
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.config import ConfigError, OpenAIAgentConfig, parse_config
from turinglab.runner.plan import identity_document
from turinglab.store.database import Store
from turinglab.store.media import MediaError, load_images, media_ref, save_images
from turinglab.store.schema import media

AUTH = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}


def test_images_are_stored_once_by_content_and_checked(store_location: str) -> None:
    store = Store(store_location)
    try:
        blue, red = ImagePart.from_bytes(png()), ImagePart.from_bytes(png((200, 10, 10)))
        with store.writing() as conn:
            refs = save_images(conn, [blue, red, blue])
        with store.writing() as conn:
            assert save_images(conn, [red]) == [refs[1]]  # already there: nothing written
        assert refs[0] == refs[2] == media_ref(blue) and refs[0].endswith(".png")
        with store.engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(media)).scalar_one() == 2
            assert load_images(conn, refs) == {refs[0]: blue, refs[1]: red}
            with pytest.raises(MediaError, match="not an image reference"):
                load_images(conn, ["../../etc/passwd"])
            with pytest.raises(MediaError, match="no image"):
                load_images(conn, ["0" * 64 + ".png"])
        with store.writing() as conn:  # bytes changed behind our back no longer pass
            conn.execute(media.update().where(media.c.ref == refs[1]).values(data=png()))
        with store.engine.connect() as conn, pytest.raises(MediaError, match="content hash"):
            load_images(conn, [refs[1]])
    finally:
        store.close()


async def test_an_uploaded_image_is_stored_exported_and_served_by_another_server(
    tmp_path: object,
) -> None:
    db = f"{tmp_path}/arena.db"
    setup = strong_setup()
    picture = png((30, 160, 60))
    kept = ArenaStore(Store(db), setup)
    with running_arena(setup, store=kept) as (base, _app):
        me = Person(base)
        try:
            await me.connect()
            await me.send(type="join", mode="strong-practice", consent=True)
            await state(me, phase="asking")
            status, body = await upload(me, picture)
            assert status == 200
            await me.send(type="message", channel="A", text="What is this?", image=body["id"])
            await state(me, phase="choosing")
            await kept.flush()
        finally:
            await me.close()
    kept.close()

    # A new server on the same store (a restart, or any other process of the arena).
    again = ArenaStore(Store(db), setup)
    try:
        with running_arena(setup, store=again) as (base, _app):
            async with aiohttp.ClientSession(headers=AUTH) as http:
                async with http.get(base + "/admin/export.json") as r:
                    exported = await r.json()
                (game,) = exported["unfinished_games"] or exported["practice_games"]
                (asked,) = [m for m in game["messages"] if m["text"] == "What is this?"]
                (ref,) = asked["images"]
                assert not any("images" in m for m in game["messages"] if m is not asked)
                async with http.get(f"{base}/admin/media/{ref}") as r:
                    assert r.status == 200 and r.content_type == "image/png"
                    assert await r.read() == picture
                async with http.get(f"{base}/admin/media/{'0' * 64}.png") as r:
                    assert r.status == 404 and "no image" in (await r.json())["detail"]
                async with http.get(f"{base}/admin/media/..%2Fetc%2Fpasswd") as r:
                    assert r.status == 404
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"{base}/admin/media/{ref}") as r,
            ):
                assert r.status == 401  # the admin password guards images too
    finally:
        again.close()


def _config(**agent: object) -> dict[str, object]:
    return {
        "name": "t",
        "agents": {"v": agent, "b": {"kind": "eliza"}},
        "experiment": {"game": "gtt", "universe": ["v", "b"], "trials_per_pair": 2},
    }


def test_which_agents_see_images_is_set_per_agent_in_the_config() -> None:
    openai = {"kind": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1"}
    default = parse_config(_config(**openai))
    blind = parse_config(_config(**openai, sees_images=False))
    seeing, not_seeing = build_agent("v", default.agents["v"]), build_agent("v", blind.agents["v"])
    assert isinstance(seeing, OpenAIChatAgent) and isinstance(not_seeing, OpenAIChatAgent)
    assert seeing.sees_images is True and not_seeing.sees_images is False
    # Unset leaves a run's identity as before the setting existed; false changes it.
    assert "sees_images" not in identity_document(default)["agents"]["v"]
    assert identity_document(blind)["agents"]["v"]["sees_images"] is False
    assert isinstance(blind.agents["v"], OpenAIAgentConfig)
    # Text-only kinds: false is accepted (it is what they do), true is a clear error.
    parse_config(_config(kind="scripted", replies=["x"], sees_images=False))
    with pytest.raises(ConfigError) as err:
        parse_config(_config(kind="local", model="smollm2", sees_images=True), "exp.yaml")
    assert "agents.v" in str(err.value) and "sees_images" in str(err.value)
    assert "only kind 'openai' agents can receive images" in str(err.value)

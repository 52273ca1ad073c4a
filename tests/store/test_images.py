"""Images in messages: checked by their bytes, sent to vision endpoints as image_url parts,
shown to every other agent as an "[image]" marker, delivered to people, kept beside the store."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator

import pytest
from PIL import Image

from turinglab.agents.base import (
    IMAGE_MARKER,
    BadImage,
    CallContext,
    ChatMessage,
    ImagePart,
)
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.human import HumanAgent
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.games.events import EventLog
from turinglab.games.table import Seat, Table
from turinglab.testing.fake_openai import FakeOpenAIServer


def picture(fmt: str = "PNG", size: tuple[int, int] = (8, 6)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, (200, 40, 40)).save(out, format=fmt)
    return out.getvalue()


@pytest.fixture
async def server() -> AsyncIterator[FakeOpenAIServer]:
    fake = FakeOpenAIServer()
    await fake.start()
    yield fake
    await fake.stop()


def test_media_type_comes_from_the_bytes_not_the_name() -> None:
    assert ImagePart.from_bytes(picture("PNG")).media_type == "image/png"
    assert ImagePart.from_bytes(picture("JPEG")).media_type == "image/jpeg"
    gif = io.BytesIO()
    Image.new("RGB", (4, 4)).save(gif, format="GIF")
    with pytest.raises(BadImage, match="not a PNG or JPEG"):
        ImagePart.from_bytes(gif.getvalue())
    with pytest.raises(BadImage, match="not a PNG or JPEG"):
        ImagePart.from_bytes(b"<svg onload=alert(1)>")
    with pytest.raises(BadImage, match="more than the 100 allowed"):
        ImagePart.from_bytes(picture("PNG", (64, 64)), max_bytes=100)
    with pytest.raises(BadImage, match="empty"):
        ImagePart.from_bytes(b"")


def test_data_url_round_trip_and_bad_urls() -> None:
    image = ImagePart.from_bytes(picture())
    assert image.data_url.startswith("data:image/png;base64,")
    assert ImagePart.from_data_url(image.data_url) == image
    with pytest.raises(BadImage, match="not a base64 data URL"):
        ImagePart.from_data_url("https://example.org/cat.png")
    with pytest.raises(BadImage, match="not valid base64"):
        ImagePart.from_data_url("data:image/png;base64,@@@")


async def test_openai_agent_sends_image_url_parts(server: FakeOpenAIServer) -> None:
    assert server.base_url is not None
    agent = OpenAIChatAgent(name="vision", base_url=server.base_url, model="fake-vision")
    image = ImagePart.from_bytes(picture())
    try:
        history = [ChatMessage("user", "What colour is this?", (image,))]
        reply = await agent.reply(history, CallContext(seed=1))
    finally:
        await agent.aclose()
    assert server.last_request is not None
    (sent,) = server.last_request["messages"]
    assert sent["content"] == [
        {"type": "text", "text": "What colour is this?"},
        {"type": "image_url", "image_url": {"url": image.data_url}},
    ]
    # The server decoded the data URL back to the same bytes.
    assert reply.text == f"I see an image/png image of {len(image.data)} bytes."


async def test_plain_messages_are_sent_exactly_as_before(server: FakeOpenAIServer) -> None:
    assert server.base_url is not None
    agent = OpenAIChatAgent(name="plain", base_url=server.base_url, model="fake")
    try:
        await agent.reply([ChatMessage("user", "Hello")], CallContext(seed=1))
    finally:
        await agent.aclose()
    assert server.last_request is not None
    assert server.last_request["messages"] == [{"role": "user", "content": "Hello"}]


async def test_fake_server_refuses_a_broken_image_part(server: FakeOpenAIServer) -> None:
    import aiohttp

    body = {
        "model": "m",
        "messages": [
            {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}
        ],
    }
    url = f"{server.base_url}/chat/completions"
    async with aiohttp.ClientSession() as http, http.post(url, json=body) as resp:
        assert resp.status == 400
        assert "not text or a base64 image" in (await resp.text())


async def _no_call(*_: object) -> object:
    raise AssertionError("no agent call expected")


async def test_table_views_images_per_agent_and_delivers_them_to_people(
    server: FakeOpenAIServer,
) -> None:
    assert server.base_url is not None
    vision = OpenAIChatAgent(name="vision", base_url=server.base_url, model="m")
    blind = OpenAIChatAgent(name="blind", base_url=server.base_url, model="m", sees_images=False)
    person = HumanAgent("person:p1", "p1")
    seen = EventLog()
    table = Table(
        seats={
            "asker": Seat("asker", "person:p1", person, "human"),
            "vision": Seat("vision", "vision", vision),
            "blind": Seat("blind", "blind", blind),
            "eliza": Seat("eliza", "eliza", ElizaAgent()),
        },
        caller=_no_call,  # type: ignore[arg-type]
        seed=3,
        observer=seen,
    )
    image = ImagePart.from_bytes(picture("JPEG"))
    everyone = tuple(table.seats)
    table.post("asker", "Look at this", visible_to=everyone, images=(image,))
    table.post("asker", "and say hi", visible_to=everyone)
    try:
        assert table.view("vision") == [
            ChatMessage("user", "Look at this", (image,)),
            ChatMessage("user", "and say hi"),
        ]
        for blind_seat in ("blind", "eliza"):
            assert table.view(blind_seat) == [
                ChatMessage("user", f"Look at this\n{IMAGE_MARKER}"),
                ChatMessage("user", "and say hi"),
            ]
        # ELIZA answers the text it was given, marker and all, without failing.
        reply = await ElizaAgent().reply(table.view("eliza"), CallContext(seed=1))
        assert reply.text
        first, second = seen.messages_to("asker")
        assert first.images == (image,) and second.images == ()
    finally:
        await asyncio.gather(vision.aclose(), blind.aclose())

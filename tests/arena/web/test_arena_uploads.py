"""Uploaded images are decoded, bounded and re-encoded (issue 32): a small PNG that decodes to
16,000 × 16,000 pixels is refused, bytes after the image data (HTML behind a PNG header) and
EXIF metadata never reach a viewer, and STT state frames name images by URL instead of
resending every image in every frame."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from PIL import Image

from arena_fixtures import Person, running_arena
from test_arena_strong import state, strong_setup, upload
from turinglab.agents.base import BadImage
from turinglab.arena.web.uploads import MAX_PIXELS, reencoded


def encoded(image: Image.Image, fmt: str = "PNG", **save: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, format=fmt, **save)
    return out.getvalue()


def noise(width: int, height: int) -> Image.Image:
    """Random pixels: an image that compresses badly (a large upload)."""
    import numpy as np

    pixels = np.random.default_rng(7).integers(0, 256, (height, width, 3), dtype=np.uint8)
    return Image.fromarray(pixels, "RGB")


def test_a_decompression_bomb_is_refused_before_it_is_decoded() -> None:
    bomb = encoded(Image.new("1", (16_000, 16_000)))
    assert len(bomb) < 2 * 1024 * 1024  # small on the wire: only decoding shows what it is
    with pytest.raises(BadImage, match="more pixels than the 25 MP allowed"):
        reencoded(bomb)
    with pytest.raises(BadImage, match="6000 × 5000 pixels: more pixels than the 25 MP"):
        reencoded(encoded(Image.new("1", (6000, 5000))))  # under Pillow's bound, over ours
    side = int(MAX_PIXELS**0.5)
    assert Image.open(io.BytesIO(reencoded(encoded(Image.new("L", (side, side)))).data)).size == (
        side,
        side,
    )


def test_what_follows_the_image_data_and_the_metadata_are_dropped() -> None:
    trailer = b"<html><script>alert(1)</script></html>"
    kept = reencoded(encoded(Image.new("RGB", (40, 30), (200, 10, 10))) + trailer)
    assert kept.media_type == "image/png" and trailer not in kept.data
    assert Image.open(io.BytesIO(kept.data)).getpixel((0, 0)) == (200, 10, 10)

    exif = Image.Exif()
    exif[0x0131] = "SecretCamera 3000"  # Software
    exif[0x0112] = 6  # Orientation: rotate 90° to show
    photo = encoded(Image.new("RGB", (40, 30), (10, 200, 10)), "JPEG", exif=exif.tobytes())
    assert b"SecretCamera" in photo
    kept = reencoded(photo)
    assert kept.media_type == "image/jpeg" and b"SecretCamera" not in kept.data
    shown = Image.open(io.BytesIO(kept.data))
    assert shown.size == (30, 40) and not shown.getexif()  # turned upright, no metadata left


def test_broken_and_foreign_files_are_refused() -> None:
    whole = encoded(noise(64, 64))
    for bad in (whole[: len(whole) // 2], b"\x89PNG\r\n\x1a\n<html></html>", b"GIF89a......"):
        with pytest.raises(BadImage):
            reencoded(bad)


async def test_stt_frames_name_images_by_url_and_stay_small() -> None:
    with running_arena(strong_setup()) as (base, _):
        a, b = Person(base), Person(base)
        try:
            for p in (a, b):
                await p.connect()
            await a.send(type="join", mode="strong", consent=True)
            await b.send(type="join", mode="strong", consent=True)
            sa = await state(a)
            await state(b)
            inv, resp = (a, b) if sa["role"] == "investigator" else (b, a)

            status, body = await upload(inv, encoded(Image.new("1", (16_000, 16_000))))
            assert status == 400 and "25 MP" in body["error"]
            big = encoded(noise(700, 700))  # ~1.5 MB of incompressible pixels
            status, body = await upload(inv, big + b"<html>after the image</html>")
            assert status == 200, body
            await inv.send(type="message", channel="A", text="What is this?", image=body["id"])
            turn = (await state(resp, phase="answering"))["history"][0]
            async with resp.http.get(base + turn["images"][0]) as r:
                served = await r.read()
            assert b"<html>" not in served and Image.open(io.BytesIO(served)).size == (700, 700)
            await resp.send(type="message", channel="A", text="static on a screen")
            await state(inv, phase="choosing")
            await inv.send(type="preference", tie=True)
            await state(inv, phase="asking", can_end=True)
            await inv.send(type="message", channel="A", text="And now?")
            await state(resp, phase="answering")
            await resp.send(type="message", channel="A", text="still static")
            await state(inv, phase="choosing")
            for person in (inv, resp):
                sent = sum(len(json.dumps(f)) for f in person.frames)
                assert sent < 20_000, sent  # the 1.5 MB image went once, over HTTP
        finally:
            await a.close()
            await b.close()

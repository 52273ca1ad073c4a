"""The paper's 11 colour names and the nearest one to an image's mean pixel.

Shared by the offline vision baseline agent (agents/vision_baseline.py) and the fake vision
model of the test server (testing/fake_openai.py), so both answer the same way."""

from __future__ import annotations

import io

# Reference RGB of each name of the colour-estimation task (Zhang et al.'s 11 colours).
NAMED_RGB: dict[str, tuple[int, int, int]] = {
    "red": (200, 30, 30), "pink": (240, 150, 190), "orange": (240, 140, 20),
    "yellow": (240, 230, 40), "purple": (130, 40, 160), "green": (40, 160, 60),
    "blue": (30, 60, 200), "brown": (120, 75, 30), "gray": (128, 128, 128),
    "black": (15, 15, 15), "white": (245, 245, 245),
}  # fmt: skip


def nearest_colour(rgb: tuple[int, int, int]) -> str:
    """The colour name whose reference RGB is nearest (squared distance) to `rgb`."""

    def distance(name: str) -> int:
        return sum((a - b) ** 2 for a, b in zip(NAMED_RGB[name], rgb, strict=True))

    return min(NAMED_RGB, key=distance)


def mean_rgb(image: bytes) -> tuple[int, int, int]:
    """The mean pixel of a PNG or JPEG image (box-resampled to one pixel)."""
    from PIL import Image

    with Image.open(io.BytesIO(image)) as img:
        small = img.convert("RGB").resize((1, 1), Image.Resampling.BOX)
        pixel: tuple[int, int, int] = small.getpixel((0, 0))  # type: ignore[assignment]
    return pixel


def image_size(image: bytes) -> tuple[int, int]:
    from PIL import Image

    with Image.open(io.BytesIO(image)) as img:
        return img.size


def dominant_colour(image: bytes) -> str:
    """The colour name nearest the image's mean pixel."""
    return nearest_colour(mean_rgb(image))

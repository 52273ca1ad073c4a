"""Images people upload to the arena: decoded, bounded and re-encoded before anyone sees them.

Magic bytes alone let through a 249 KB PNG that decodes to 16,000 × 16,000 pixels (over a
gigabyte in every viewer's browser) and a PNG header followed by HTML. So an upload is decoded
with Pillow: its pixel count is bounded (read from the header, before decoding), so is its
decoded size, and what is kept and served is a fresh encoding of the decoded pixels (same
format, no metadata — EXIF and its GPS position go — and nothing after the image data).
Decoding takes CPU and memory: it runs in a thread, a few at a time.
"""

from __future__ import annotations

import asyncio
import io
import threading

from PIL import Image, ImageOps

from turinglab.agents.base import MAX_IMAGE_BYTES, BadImage, ImagePart

MAX_PIXELS = 25_000_000  # 25 MP: a large photo; far more than a chat image needs
MAX_DECODED_BYTES = 4 * MAX_PIXELS  # RGBA at the pixel bound
JPEG_QUALITY = 90
_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg"}
_decoding = threading.BoundedSemaphore(2)  # at most ~200 MB of pixels held at once


def reencoded(data: bytes) -> ImagePart:
    """The upload decoded and encoded afresh (BadImage, with a message for the person, if it is
    not a PNG/JPEG within the bounds)."""
    ImagePart.from_bytes(data)  # the byte limit and the magic numbers first: cheap
    try:
        with _decoding, Image.open(io.BytesIO(data), formats=list(_FORMATS)) as image:
            _bounded(image)
            image.load()  # a truncated or corrupt file fails here
            out = _encode(ImageOps.exif_transpose(image), str(image.format))
    except BadImage:
        raise
    except Image.DecompressionBombError:  # Pillow's own bound (far above ours) met at open
        raise BadImage(f"image: more pixels than the {MAX_PIXELS // 10**6} MP allowed") from None
    except (OSError, ValueError, SyntaxError):
        raise BadImage("image: the file cannot be read as a PNG or JPEG image") from None
    if len(out) > MAX_IMAGE_BYTES:
        raise BadImage(
            f"image: over {MAX_IMAGE_BYTES // 2**20} MB once re-encoded; send a smaller one"
        )
    return ImagePart.from_bytes(out)


async def reencoded_off_loop(data: bytes) -> ImagePart:
    return await asyncio.to_thread(reencoded, data)


def _bounded(image: Image.Image) -> None:
    width, height = image.size
    if width * height > MAX_PIXELS:
        raise BadImage(
            f"image: {width} × {height} pixels: more pixels than the "
            f"{MAX_PIXELS // 10**6} MP allowed"
        )
    per_pixel = max(1, len(image.getbands())) * (2 if image.mode.startswith("I;16") else 1)
    if width * height * per_pixel > MAX_DECODED_BYTES:
        raise BadImage(f"image: over {MAX_DECODED_BYTES // 2**20} MB once decoded")


def _encode(image: Image.Image, fmt: str) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        rgb = image if image.mode in ("L", "RGB") else image.convert("RGB")
        rgb.save(out, "JPEG", quality=JPEG_QUALITY)
    else:
        image.save(out, "PNG", optimize=False)
    return out.getvalue()

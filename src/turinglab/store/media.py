"""Images of messages, kept in the store beside the messages (table `media`).

Each image is stored once under its content hash (`<sha256>.png|.jpg`): an image sent in many
messages, or a game replayed, costs one row, and a reference proves its content. A message
names the images it carried in `messages.images`. Being in the database (not files beside
it), an image written by one arena process can be served and replayed by any other.

The bytes are checked (PNG/JPEG by their magic numbers, size-limited: `ImagePart.from_bytes`)
when they arrive and again when they are read back.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Iterable, Sequence

from sqlalchemy import Connection, Executable, insert, select

from turinglab.agents.base import ImagePart
from turinglab.store.schema import media

_EXT = {"image/png": ".png", "image/jpeg": ".jpg"}
_REF = re.compile(r"^[0-9a-f]{64}\.(png|jpg)$")


class MediaError(ValueError):
    """A reference that names no image of the store, or an image that fails its checks."""


def media_ref(image: ImagePart) -> str:
    """An image's reference: its content hash and type."""
    return hashlib.sha256(image.data).hexdigest() + _EXT[image.media_type]


def check_ref(ref: str) -> str:
    if not _REF.match(ref):
        raise MediaError(f"media: {ref!r} is not an image reference (<sha256>.png|.jpg)")
    return ref


def save_images(conn: Connection, images: Sequence[ImagePart]) -> list[str]:
    """Store the images not stored yet (in the caller's transaction); returns their refs."""
    refs = [media_ref(image) for image in images]
    new = {ref: image for ref, image in zip(refs, images, strict=True)}
    if new:
        have = conn.execute(select(media.c.ref).where(media.c.ref.in_(list(new)))).scalars()
        for ref in set(have):
            del new[ref]
    if new:
        now = time.time()
        rows = [
            {"ref": r, "media_type": i.media_type, "size": len(i.data), "data": i.data,
             "created_at": now}
            for r, i in new.items()
        ]  # fmt: skip
        conn.execute(_insert_unless_there(conn), rows)
    return refs


def _insert_unless_there(conn: Connection) -> Executable:
    # Two processes storing one image at once: the second insert is a no-op, not an error.
    if conn.dialect.name == "postgresql":
        from sqlalchemy.dialects.postgresql import insert as pg_insert

        return pg_insert(media).on_conflict_do_nothing(index_elements=["ref"])
    if conn.dialect.name == "sqlite":
        from sqlalchemy.dialects.sqlite import insert as sqlite_insert

        return sqlite_insert(media).on_conflict_do_nothing(index_elements=["ref"])
    return insert(media)


def load_images(conn: Connection, refs: Iterable[str]) -> dict[str, ImagePart]:
    """ref -> image for the given refs; a missing one or one whose bytes do not match its
    hash is an error naming it."""
    wanted = {check_ref(r) for r in refs}
    if not wanted:
        return {}
    rows = conn.execute(select(media.c.ref, media.c.data).where(media.c.ref.in_(wanted))).all()
    found = {}
    for ref, data in rows:
        image = ImagePart.from_bytes(bytes(data))
        if media_ref(image) != ref:
            raise MediaError(f"media: {ref} does not match its content hash")
        found[ref] = image
    missing = sorted(wanted - set(found))
    if missing:
        raise MediaError(f"media: no image {missing[0]} in this store")
    return found

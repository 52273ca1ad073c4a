"""Images of messages, kept as files beside the store (the messages table holds text only).

Each image is written once under its content hash (`<sha256>.png|.jpg`), so an image sent in
many messages, or a game replayed, costs one file, and a file's name proves its content. Which
message carried which images is one JSON line per message in `messages.jsonl`
(game key, seq, refs): append-only, so a crash loses at most the line being written.

Wiring (for the runner / arena sink): for a `TranscriptMessage` with `images`, call
`MediaStore(root).save_message(game_key, msg.seq, msg.images)`; to show or export a stored
transcript, `images_of(game_key)` gives seq -> images.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from turinglab.agents.base import ImagePart

_EXT = {"image/png": ".png", "image/jpeg": ".jpg"}
INDEX = "messages.jsonl"


class MediaStore:
    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def save(self, image: ImagePart) -> str:
        """Write the image (once) and return its reference, the file name."""
        ref = hashlib.sha256(image.data).hexdigest() + _EXT[image.media_type]
        path = self.root / ref
        if not path.exists():
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(".part")
            tmp.write_bytes(image.data)
            os.replace(tmp, path)  # never a half-written image under its final name
        return ref

    def load(self, ref: str) -> ImagePart:
        """An image by reference, checked again (a file edited on disk does not pass)."""
        if Path(ref).name != ref or not ref.endswith(tuple(_EXT.values())):
            raise ValueError(f"media: {ref!r} is not an image reference")
        data = (self.root / ref).read_bytes()
        if hashlib.sha256(data).hexdigest() != ref.rsplit(".", 1)[0]:
            raise ValueError(f"media: {ref} does not match its content hash")
        return ImagePart.from_bytes(data)

    def save_message(self, game_key: str, seq: int, images: Sequence[ImagePart]) -> list[str]:
        refs = [self.save(image) for image in images]
        if refs:
            line = json.dumps({"game": game_key, "seq": seq, "images": refs})
            with (self.root / INDEX).open("a", encoding="utf-8") as index:
                index.write(line + "\n")
        return refs

    def images_of(self, game_key: str) -> dict[int, list[ImagePart]]:
        """seq -> images of one game's messages that had any."""
        index = self.root / INDEX
        out: dict[int, list[ImagePart]] = {}
        if not index.exists():
            return out
        for line in index.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:  # a line cut short by a crash
                continue
            if row.get("game") == game_key:
                out[int(row["seq"])] = [self.load(ref) for ref in row["images"]]
        return out

"""Games that take images over HTTP: a websocket frame holds a few KB, so a page uploads each
image first (web/image_routes.py) and its message then names the upload. Which kinds take them
is their kit's to say (`ModeKit.takes_images`); the web layer asks here, never naming a mode."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol, cast

from turinglab.arena.core.mode_kits import kit_of

if TYPE_CHECKING:
    from turinglab.agents.base import ImagePart
    from turinglab.arena.core.live import LiveGame
    from turinglab.arena.core.participants import Participant


class TakesImages(Protocol):
    media: Mapping[str, ImagePart]  # ref -> an image a turn carried, for the game's people

    def add_upload(self, participant: Participant, image: ImagePart) -> str:
        """Keep `image` until its sender's message names it; its upload id."""
        ...


def image_game(game: LiveGame | None, *, playing: bool = True) -> TakesImages | None:
    """`game` if its kind takes images (and, with `playing`, it has not ended), else None."""
    if game is None or (playing and game.result is not None):
        return None
    kit = kit_of(game.mode)
    return cast("TakesImages", game) if kit is not None and kit.takes_images else None

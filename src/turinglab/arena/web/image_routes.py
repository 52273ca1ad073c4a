"""Images over HTTP, for the kinds whose kit takes them (the Strong Turing Test's):
`POST /arena/image` takes one upload for the sender's session (a websocket frame is limited to
a few KB; the message frame then names the upload), `GET /arena/media/<game>/<ref>` gives a
turn's image to the game's people only (core/image_port.py)."""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from turinglab.agents.base import MAX_IMAGE_BYTES, BadImage
from turinglab.arena.core.image_port import TakesImages, image_game
from turinglab.arena.core.participants import Participant
from turinglab.arena.core.person_view import InputRejected
from turinglab.arena.http.session_cookie import COOKIE
from turinglab.arena.web.uploads import reencoded_off_loop


def add_image_route(app: FastAPI) -> None:
    """`POST /arena/image`: the raw bytes of one PNG/JPEG (≤ 2 MB) for the sender's session;
    `GET /arena/media/<game>/<ref>`: an image of a turn, to the game's people."""

    @app.post("/arena/image")
    async def upload_image(request: Request) -> JSONResponse:
        arena = request.app.state.arena
        person = arena.sessions.get(request.cookies.get(COOKIE))
        origin = request.headers.get("origin")
        if person is None or (origin and origin.split("://", 1)[-1] != request.headers["host"]):
            return JSONResponse({"error": "No session: reload the page."}, 401)
        body = bytearray()
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_IMAGE_BYTES:
                return JSONResponse({"error": "Images are limited to 2 MB."}, 413)
        if _taking_images(arena, person) is None:
            return JSONResponse({"error": "You are not in a session that takes images."}, 409)
        try:
            image = await reencoded_off_loop(bytes(body))
            game = _taking_images(arena, person)  # it may have ended while the image decoded
            if game is None:
                return JSONResponse({"error": "You are not in a session that takes images."}, 409)
            upload_id = game.add_upload(person, image)
        except (BadImage, InputRejected) as err:
            return JSONResponse({"error": str(err)}, 400)
        return JSONResponse({"id": upload_id})

    @app.get("/arena/media/{game_id}/{ref}")
    async def turn_image(request: Request, game_id: str, ref: str) -> Response:
        person = request.app.state.arena.sessions.get(request.cookies.get(COOKIE))
        game = request.app.state.arena.games.get(game_id)
        images = image_game(game, playing=False)
        if images is not None and person is not None and _plays_in(game, person):
            image = images.media.get(ref)
        else:
            image = None
        if image is None:
            return JSONResponse({"error": "No such image."}, 404)
        # Named by its content hash: it never changes, so the browser fetches it once.
        cache = {"Cache-Control": "private, max-age=86400, immutable"}
        return Response(image.data, media_type=image.media_type, headers=cache)


def _plays_in(game: Any, person: Participant) -> bool:
    return any(v.participant.id == person.id for v in game.views.values())


def _taking_images(arena: Any, person: Participant) -> TakesImages | None:
    return image_game(arena.games.get(person.game or ""))

"""Request bodies read with a bound: an unauthenticated POST cannot make the server hold a
gigabyte. Starlette's `request.body()` and `request.json()` read whatever is sent, however
large, before the route can look at it; these stop at `limit` bytes (a declared
Content-Length over it is refused before anything is read)."""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request


class BodyTooLarge(ValueError):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the request body is larger than {limit // 1024} KiB")


async def bounded_body(request: Request, limit: int) -> bytes:
    """The body, or BodyTooLarge once more than `limit` bytes are declared or arrive."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(limit)
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(limit)
    return bytes(body)


async def bounded_json(request: Request, limit: int) -> Any:
    """The JSON body: BodyTooLarge past `limit`, ValueError when it is not JSON."""
    return json.loads(await bounded_body(request, limit))

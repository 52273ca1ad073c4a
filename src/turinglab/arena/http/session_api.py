"""What the two anonymous-session JSON APIs share: /judge (judging.py) and /respond
(collect.py). A session is a random HttpOnly cookie; a body is read with a bound into its
model, its faults answered 400/413; a start checks consent, and counts a new record once per
session and only as the new-record gate allows (new_records.py)."""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from fastapi import Request, Response
from fastapi.responses import FileResponse, JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool

from turinglab.arena.http.new_records import NewRecordGate, client_address
from turinglab.arena.http.request_body import BodyTooLarge, bounded_json

STATIC = Path(__file__).parents[1] / "static"
MAX_BODY_BYTES = 16 * 1024  # the APIs' bodies are a form or one answer: a few hundred bytes


class StartBody(BaseModel):
    """A start's body: consent, and whatever else an API's form asks (a subclass)."""

    model_config = ConfigDict(extra="forbid")

    consent: bool


Body = TypeVar("Body", bound=BaseModel)
Start = TypeVar("Start", bound=StartBody)
Record = TypeVar("Record")


def bad_request(message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=400)


async def read_json(request: Request) -> Any:
    """The body as JSON, read up to MAX_BODY_BYTES (BodyTooLarge, or ValueError: not JSON)."""
    return await bounded_json(request, MAX_BODY_BYTES)


def too_large(err: BodyTooLarge) -> JSONResponse:
    return JSONResponse({"error": str(err)}, status_code=413)


def first_error(err: ValidationError) -> str:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


async def read_body(request: Request, model: type[Body]) -> Body | JSONResponse:
    """The body as `model`, or the answer that says what is wrong with it: 400 (not JSON, or
    not the model: its first error), 413 (too large)."""
    try:
        return model.model_validate(await read_json(request))
    except ValidationError as err:
        return bad_request(first_error(err))
    except BodyTooLarge as err:
        return too_large(err)
    except ValueError:
        return bad_request("the request body is not JSON")


async def read_start(
    request: Request, cookie: str, model: type[Start]
) -> tuple[str, Start] | JSONResponse:
    """A start's session token and body, consent given; else the 400/413 to answer."""
    token = request.cookies.get(cookie)
    if not token:
        return bad_request("no session: reload the page")
    body = await read_body(request, model)
    if isinstance(body, JSONResponse):
        return body
    if not body.consent:
        return bad_request("consent is needed to take part")
    return token, body


def refused_record(gate: NewRecordGate, request: Request, held: int) -> JSONResponse | None:
    """429/503 when this caller may not start a new record now (new_records.py)."""
    refused = gate.refusal(client_address(request), held)
    if refused is None:
        return None
    return JSONResponse(
        {"error": refused.message}, status_code=refused.status, headers=refused.headers
    )


async def admit(
    request: Request,
    gate: NewRecordGate,
    held: int,
    known: Record | None,
    register: Callable[[], Record],
    state: Callable[[Record], dict[str, Any]],
) -> JSONResponse:
    """The state of the session's record: `known` (a reload, never counted again), or one
    `register`ed now if the gate lets this caller start one (`held`: how many there are)."""
    if known is not None:
        return JSONResponse(state(known))
    refused = refused_record(gate, request, held)
    if refused is not None:
        return refused
    record = await run_in_threadpool(register)  # fsync off the loop
    gate.started(client_address(request))
    return JSONResponse(state(record))


def page_with_session(request: Request, page: str, cookie: str) -> Response:
    """A static page that starts an anonymous session: a random HttpOnly token in `cookie`
    when the browser has none (the server keeps only its hash)."""
    response = FileResponse(STATIC / page, headers={"Cache-Control": "no-store"})
    if not request.cookies.get(cookie):
        response.set_cookie(
            cookie,
            secrets.token_urlsafe(32),
            httponly=True,
            samesite="strict",
            max_age=30 * 24 * 3600,
            secure=request.url.scheme == "https",  # behind TLS (or a trusted TLS proxy)
        )
    return response

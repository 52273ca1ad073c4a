"""Every route that makes state for anyone who asks is bounded (issue 32), over real HTTP:
/judge/api/start and /respond/api/start are limited per address like /consent (a bot with a
fresh cookie each time used to add a judge or a respondent file per request), /respond
answers lose control and bidi characters and are counted as the page counts, no
unauthenticated JSON route reads a body past a few KiB (they used to read all of it), and one
session holds a few websockets, not any number."""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, Person, make_setup, running_arena, serving_in_thread
from judge_fixtures import conversation_study, stimuli_folder
from turinglab.arena import create_app
from turinglab.arena.itt.collect_store import HUMAN_RESPONSES, PARTICIPANTS, CollectStore
from turinglab.arena.itt.judging import open_judging
from turinglab.arena.itt.judging_store import LOG
from turinglab.itt.dataset import load_dataset

pytestmark = pytest.mark.server

BOT, PERSON = "203.0.113.9", "198.51.100.7"
FORM = {"age": 34, "gender": "female", "education": "master", "english": "fluent"}
CAPTION = "Soft green grass covers the wide empty field"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@contextlib.contextmanager
def arena(tmp_path: Path, clock: Clock | None = None, **settings: Any) -> Iterator[tuple]:
    """The arena with /judge and /respond, as `serve --proxy-headers` runs it (the test is
    the proxy, so it names each request's address)."""
    judging = open_judging(conversation_study(tmp_path / "study"), batch_size=8)
    kwargs = {} if clock is None else {"clock": clock}
    collecting = CollectStore.open(stimuli_folder(tmp_path / "stimuli", cues=()), **kwargs)
    app = create_app(
        make_setup(**settings),
        admin_password=ADMIN_PASSWORD,
        judging=judging,
        collecting=collecting,
    )
    with serving_in_thread(app, proxy_headers=True, forwarded_allow_ips="127.0.0.1") as base:
        yield base, judging, collecting


def bot() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())  # sets its own cookies


async def start(
    http: aiohttp.ClientSession, url: str, cookie: str, token: str, body: Any, address: str
) -> int:
    headers = {"Cookie": f"{cookie}={token}", "X-Forwarded-For": address}
    async with http.post(url, json=body, headers=headers) as r:
        if r.status in (429, 503):
            assert 1 <= int(r.headers["Retry-After"]) <= 601
            assert "try again later" in (await r.json())["error"]
        return r.status


def judges_on_disk(folder: Path) -> int:
    lines = (folder / LOG).read_text().splitlines() if (folder / LOG).is_file() else []
    return sum(1 for line in lines if json.loads(line)["kind"] == "judge")


async def test_new_judges_and_respondents_are_limited_per_address(tmp_path: Path) -> None:
    with arena(tmp_path, consents_per_address=4) as (base, judging, collecting):
        judge = (base + "/judge/api/start", "turinglab_judge", {"consent": True,
                 "demographics": FORM})  # fmt: skip
        respond = (base + "/respond/api/start", "turinglab_respondent", {"consent": True})
        async with bot() as http:
            for url, cookie, body in (judge, respond):
                tokens = [secrets.token_urlsafe(16) for _ in range(12)]
                statuses = [await start(http, url, cookie, t, body, BOT) for t in tokens]
                assert statuses == [200] * 4 + [429] * 8, url
                # Someone who already has a record is never counted (a reload) ...
                assert await start(http, url, cookie, tokens[0], body, BOT) == 200
                # ... and someone at another address starts as always.
                assert await start(http, url, cookie, "a-person", body, PERSON) == 200
        assert len(judging.judges) == 5 and judges_on_disk(judging.study.folder) == 5
        assert len(collecting.participants) == 5
        assert len(list((collecting.folder / PARTICIPANTS).glob("*.json"))) == 5


async def test_the_number_of_judges_and_respondents_is_bounded(tmp_path: Path) -> None:
    with arena(tmp_path, max_sessions=3) as (base, judging, collecting):
        async with bot() as http:
            url, cookie = base + "/judge/api/start", "turinglab_judge"
            body = {"consent": True, "demographics": FORM}
            statuses = [await start(http, url, cookie, f"t{i}", body, f"10.0.0.{i}")
                        for i in range(6)]  # fmt: skip
            assert statuses == [200] * 3 + [503] * 3
            url, cookie = base + "/respond/api/start", "turinglab_respondent"
            statuses = [await start(http, url, cookie, f"t{i}", {"consent": True}, f"10.0.1.{i}")
                        for i in range(5)]  # fmt: skip
            assert statuses == [200] * 3 + [503] * 2
        assert len(judging.judges) == 3 and len(collecting.participants) == 3


async def test_respond_answers_lose_control_and_bidi_characters(tmp_path: Path) -> None:
    clock = Clock()
    with arena(tmp_path, clock) as (base, _, collecting):
        jar = aiohttp.CookieJar(unsafe=True)
        async with aiohttp.ClientSession(cookie_jar=jar) as http:
            async with http.get(base + "/respond") as r:
                assert r.status == 200  # sets the respondent cookie
            async with http.post(base + "/respond/api/start", json={"consent": True}) as r:
                trial = (await r.json())["trial"]
            assert trial["task"] == "captioning"
            clock.now += 10.0

            async def answer(text: str) -> tuple[int, dict[str, Any]]:
                body = {"position": trial["position"], "text": text}
                async with http.post(base + "/respond/api/answer", json=body) as r:
                    return r.status, await r.json()

            # 501 emoji are 1,002 UTF-16 units: past the page's maxlength of 1,000.
            status, out = await answer("\U0001f600" * 501)
            assert status == 400 and out["error"] == "text: an answer has at most 1000 characters"
            (person,) = collecting.participants.values()
            assert not person.answers

            typed = "Soft green\u202e grass\x00 covers the\u2066 wide\u200f empty field\ufeff"
            status, out = await answer(typed)
            assert status == 200, out
    (record_file,) = (collecting.folder / PARTICIPANTS).glob("*.json")
    (kept,) = json.loads(record_file.read_text())["answers"]
    assert kept["typed"] == kept["text"] == CAPTION
    (row,) = load_dataset(collecting.folder / HUMAN_RESPONSES)
    assert row.text == CAPTION and row.model_extra is not None and row.model_extra["raw"] == CAPTION
    for ch in "\u202e\x00\u2066\u200f\ufeff":
        assert ch not in (collecting.folder / HUMAN_RESPONSES).read_text(encoding="utf-8")


async def test_no_unauthenticated_route_reads_a_large_body(tmp_path: Path) -> None:
    # Larger than every limit (4 and 16 KiB), small enough to sit in the socket's buffers
    # while the server answers early. Valid JSON: read whole, it used to be taken.
    big = b'{"consent": true, "pad": "' + b"x" * (256 << 10) + b'"}'

    async def chunks() -> Any:  # no Content-Length: the server has to count what arrives
        for i in range(0, len(big), 1 << 14):
            yield big[i : i + (1 << 14)]

    with arena(tmp_path) as (base, judging, collecting):
        async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:
            async with http.get(base + "/judge"), http.get(base + "/respond"):
                pass  # the judge's and respondent's cookies
            body = {"consent": True, "demographics": FORM}
            async with http.post(base + "/judge/api/start", json=body) as r:
                assert r.status == 200  # registered: the answer routes read their bodies
            async with http.post(base + "/respond/api/start", json={"consent": True}) as r:
                assert r.status == 200
            for path in ("/consent", "/judge/api/start", "/respond/api/start",
                         "/judge/api/answer", "/respond/api/answer"):  # fmt: skip
                for data in (big, chunks()):
                    headers = {"Content-Type": "application/json"}
                    async with http.post(base + path, data=data, headers=headers) as r:
                        assert r.status == 413, path
                        assert "larger than" in await r.text()
        assert len(judging.judges) == len(collecting.participants) == 1


async def test_one_session_opens_a_few_sockets_not_thousands() -> None:
    """Each socket of a session is sent every frame of it: a loop opening sockets for one
    session used to hold them all."""
    with running_arena(make_setup(max_sockets_per_session=3)) as (base, _):
        person = Person(base)
        extra: list[aiohttp.ClientWebSocketResponse] = []
        try:
            assert (await person.connect())["type"] == "status"
            url = base.replace("http", "ws") + "/ws"
            for _ in range(2):
                extra.append(await person.http.ws_connect(url))
                assert (await extra[-1].receive_json(timeout=30))["type"] == "status"
            refused = await person.http.ws_connect(url)
            frame = await refused.receive_json(timeout=30)
            assert frame["type"] == "error" and frame["code"] == "too-many-tabs"
            assert (await refused.receive(timeout=30)).type == aiohttp.WSMsgType.CLOSE
            assert refused.close_code == 1008

            await extra.pop().close()  # a tab closed: another may open
            for _ in range(600):
                again = await person.http.ws_connect(url)
                frame = await again.receive_json(timeout=30)
                extra.append(again)
                if frame["type"] == "status":
                    break
                await again.close()
                extra.pop()
                await asyncio.sleep(0.05)  # the server counts the closed one down
            assert frame["type"] == "status"
            await person.send(type="join", mode="practice", consent=True)  # still playing
            assert (await person.until("game"))["type"] == "game"
        finally:
            for ws in extra:
                await ws.close()
            await person.close()

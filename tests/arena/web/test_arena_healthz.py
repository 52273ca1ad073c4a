"""`/healthz` is public: it says ok or degraded (and which service is down), never how many
games or people the study has (issue 32); those counts are behind the admin password."""

from __future__ import annotations

import aiohttp

from arena_fixtures import Person, make_setup, running_arena


async def test_healthz_says_only_ok_or_degraded() -> None:
    with running_arena(make_setup()) as (base, _):
        someone = Person(base)
        try:
            await someone.connect()
            async with aiohttp.ClientSession() as http, http.get(base + "/healthz") as r:
                assert r.status == 200
                body = await r.json()
        finally:
            await someone.close()
    assert body["ok"] is True and body["status"] == "ok"
    assert all(isinstance(v, bool | str) for v in body.values()), body
    assert not {"people", "live_games"} & set(body)

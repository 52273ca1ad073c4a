"""A person who leaves an ITT chat is noticed wherever their socket was (PostgreSQL + Redis).

Two arena processes share the store and Redis. Two people are matched for a topic conversation
(itt_chat_mode.py), each on the process named by the case; the one who leaves closes their
socket for good. Their partner must be told within the mode's abandon window (plus generous
slack for a loaded machine), and the store must hold the game as abandoned with the reason
(status `flagged`, the result's `abandoned` kept in its outcome), read back with SQL. Before
that, the person who will leave stays connected, silent, for longer than the window: presence
is what keeps the game going, not the absence of any check.

The cases: the leaver's socket is on the process that does not own the game (their frames
are relayed through Redis; the case issue 33 suspected), on the owner while the partner is
elsewhere, and both on one process of the cluster (the control).
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import psycopg
import pytest

from arena_fixtures import Person
from test_arena_itt_chat import PEOPLE_LINES
from test_arena_multiprocess import arena_processes
from turinglab.arena.core.abandon import ABANDONED, TOLD_STAYED
from turinglab.arena.modes.itt_chat_mode import MODE
from turinglab.store.arena_records import RESULT_STATUS

pytestmark = [pytest.mark.database, pytest.mark.slow]

GRACE_S = 3.0  # the chat mode's abandon_after_s in the servers below (a relay under load
# can take over a second: a shorter window would count a silent person gone by accident)
CHAT_SERVER = """
import sys
sys.path.insert(0, {tests!r})
from arena_fixtures import ADMIN_PASSWORD, serve_on_fd
from test_arena_itt_chat import chat_setup
from turinglab.arena import create_app
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.store.database import Store
setup = chat_setup(ai_after_s=600, abandon_after_s=3.0)  # GRACE_S; people only
app = create_app(
    setup, admin_password=ADMIN_PASSWORD, store=ArenaStore(Store({db!r}), setup, worker={port!r}),
    redis_url="redis://127.0.0.1:6379/0", secret="shared test secret", namespace={ns!r},
)
serve_on_fd(app, {fd})
"""

# (process of the one who leaves, process of the one who stays); the second to join takes
# the match, so the game is owned by the stayer's process in the first case.
CASES = {
    "leaver-on-the-other-process": (0, 1),
    "leaver-on-the-owner": (1, 0),
    "both-on-one-process": (1, 1),
}


def _stored(db: str) -> list[tuple[str, str | None, list[str], list[str]]]:
    """Each stored conversation (survey-only rows left out): its status, the result status
    its outcome keeps (a game with flags is stored "flagged"), its flags and the texts its
    people said, straight from SQL."""
    with psycopg.connect(db) as conn:
        games = conn.execute(
            "SELECT g.id, g.status, o.details, g.flags FROM games g"
            " LEFT JOIN outcomes o ON o.game_id = g.id"
            " WHERE g.trial_id IS NOT NULL ORDER BY g.id"
        ).fetchall()
        out = []
        for gid, status, details, flags in games:
            texts = conn.execute(
                "SELECT m.text FROM messages m JOIN seats s"
                " ON s.game_id = m.game_id AND s.seat = m.sender"
                " WHERE m.game_id = %s AND s.kind = 'human' ORDER BY m.seq",
                (gid,),
            ).fetchall()
            kept = (_json(details) or {}).get(RESULT_STATUS)
            out.append((status, kept, _json(flags), [t for (t,) in texts]))
        return out


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


async def _stored_when_settled(db: str) -> list[tuple[str, str | None, list[str], list[str]]]:
    rows: list[tuple[str, str | None, list[str], list[str]]] = []
    for _ in range(200):  # the end is committed before it is shown; the read is a backstop
        rows = _stored(db)
        if rows and all(status != "running" for status, *_ in rows):
            return rows
        await asyncio.sleep(0.05)
    return rows


@pytest.mark.parametrize("case", list(CASES))
async def test_a_chat_partner_who_leaves_is_noticed_on_any_process(
    case: str, postgres_url: str
) -> None:
    leaver_on, stayer_on = CASES[case]
    async with arena_processes(CHAT_SERVER, postgres_url) as arena:
        leaver, stayer = Person(arena.bases[leaver_on]), Person(arena.bases[stayer_on])
        try:
            for p in (leaver, stayer):
                assert (await p.connect())["type"] == "status"
            await leaver.send(type="join", mode=MODE, consent=True)
            assert (await leaver.until("status"))["state"] == "waiting"
            await stayer.send(type="join", mode=MODE, consent=True)
            starts = {p: await p.until("itt-chat") for p in (leaver, stayer)}
            opener = leaver if starts[leaver]["you"] == "A" else stayer
            other = stayer if opener is leaver else leaver
            await opener.until("itt-chat", phase="writing")
            await opener.send(type="message", channel="A", text=PEOPLE_LINES[0])
            await other.until("itt-chat", phase="writing")

            # Connected and silent for twice the window: still there, the chat goes on.
            quiet: list[dict[str, Any]] = await stayer.frames_within(2 * GRACE_S)
            assert not any(f.get("phase") == "ended" for f in quiet), quiet

            await leaver.close()  # closes the tab: no reconnect
            end = await stayer.until("itt-chat", timeout=GRACE_S + 20, phase="ended")
            assert end["flagged"] == TOLD_STAYED, end
        finally:
            for p in (leaver, stayer):
                await p.close()

    ((status, kept, flags, said),) = await _stored_when_settled(postgres_url)
    assert (status, kept) == ("flagged", ABANDONED), (status, kept, flags)
    seat = starts[leaver]["you"]
    assert flags == [f"arena: abandoned: the person at {seat} left (no reconnect within 3 s)"]
    assert said == PEOPLE_LINES[:1]

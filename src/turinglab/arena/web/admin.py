"""The admin page: the open study (and a form to open another or close it), live games, counts
per AI witness group and mode, the export links.

Server-rendered with every value escaped; reachable only with the admin password (admin_routes.py).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any

from turinglab.arena.core.mode_kits import downloads

if TYPE_CHECKING:
    from turinglab.arena.core.hub import Arena
    from turinglab.arena.web.admin_people import StudyView


@dataclass(frozen=True)
class StudyForm:
    """What the study form needs: its CSRF token and where configs may come from."""

    csrf: str
    source: str  # the open study, in words
    studies_dir: Path | None
    can_open: str | None = None  # why a study cannot be opened here, if it cannot
    error: str | None = None  # the last form's error, shown escaped


def _rows(cells: list[list[object]]) -> str:
    return "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in cells
    )


def _study_section(arena: Arena, form: StudyForm) -> str:
    settings = arena.setup.settings
    modes = ", ".join(m.title for m in arena.setup.modes)
    token = f'<input type="hidden" name="csrf" value="{escape(form.csrf)}">'
    error = f'<p class="warn" role="alert">{escape(form.error)}</p>' if form.error else ""
    head = (
        f"<p>Open: <strong>{escape(form.source)}</strong> · study "
        f"<strong>{escape(arena.setup.name)}</strong> · {escape(modes)} · "
        f"{settings.rounds} rounds per participant · seed {settings.seed}</p>{error}"
    )
    if form.can_open is not None:
        return head + f'<p class="muted">{escape(form.can_open)}</p>'
    folder = (
        f"a .yaml file in <code>{escape(str(form.studies_dir))}</code>"
        if form.studies_dir is not None
        else "no config folder is allowed on this server: paste the YAML"
    )
    return f"""{head}
<form method="post" action="/admin/study" class="study-form">{token}
<label><span>Config file ({folder})</span>
<input name="path" autocomplete="off" placeholder="studies/pilot.yaml"
{"" if form.studies_dir is not None else "disabled"}></label>
<label><span>or paste the config (YAML)</span>
<textarea name="yaml" rows="8" spellcheck="false"></textarea></label>
<label><span>Rounds per participant (empty: {settings.rounds})</span>
<input name="rounds" type="number" min="1" max="100"></label>
<button type="submit" class="primary">Open this study</button>
<p class="muted">New games follow it at once; games being played finish under the old one.</p>
</form>
<form method="post" action="/admin/study/close" class="study-form">{token}
<button type="submit" class="ghost">Close the study (back to the start-up one)</button>
</form>"""


def _since(started_at: float) -> str:
    return time.strftime("%H:%M:%S", time.localtime(started_at))


def _day(at: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(at))


def _owner(game: dict[str, Any], me: str | None) -> str:
    owner = str(game.get("owner") or "this process")
    if not game.get("owner_alive", True):
        return f"{owner} (lost: being taken over)"
    return f"{owner} (this one)" if owner == me else owner


def _body(rows: str, columns: int, empty: str) -> str:
    """A table's rows, or one row saying there are none yet."""
    return rows or f'<tr><td colspan="{columns}" class="muted">{escape(empty)}</td></tr>'


def _game_link(game: str) -> str:
    return f'<a href="/admin/game/{escape(game)}">{escape(game)}</a>'


FINISHED_LISTED = 50  # the newest finished games linked from the admin page


def verdict_of(game: dict[str, Any]) -> dict[str, Any] | None:
    """The interrogator's verdict of a game's record (its first), if it has one."""
    return next((j for j in game.get("judgements") or [] if j.get("kind") == "verdict"), None)


def _outcome(game: dict[str, Any]) -> list[object]:
    """verdict, confidence, correct, reason: what the finished game's interrogator said."""
    verdict = verdict_of(game)
    if verdict is None:
        return ["none", "", "", ""]
    confidence = verdict.get("confidence")
    right = game.get("correct")
    return [
        verdict.get("verdict", ""),
        "" if confidence is None else f"{float(confidence):.0f}",
        "" if right is None else ("yes" if right else "no"),
        verdict.get("reason") or "",
    ]


def _finished_rows(arena: Arena) -> str:
    newest = list(arena.finished)[-FINISHED_LISTED:][::-1]
    rows = []
    for g in newest:
        status = str(g.get("status")) + (" (practice)" if g.get("solo") else "")
        cells = [status, *_outcome(g)]
        rows.append(
            f"<tr><td>{_game_link(str(g['game']))}</td><td>{escape(str(g['mode']))}</td>"
            + "".join(f"<td>{escape(str(c))}</td>" for c in cells)
            + "</tr>"
        )
    return _body("".join(rows), 7, "No game has finished here yet.")


def _participant_rows(view: StudyView, rounds: int) -> str:
    rows = []
    for p in view.people.newest:
        ids = " ".join(f"{k}={v}" for k, v in p.recruitment.items())
        seen = "" if p.first_seen is None else _day(p.first_seen)
        survey = "done" if p.survey else ""
        end = "withdrawn" if p.withdrawn else (p.end or "").replace("_", " ")
        rows.append([p.participant, f"{p.rounds} of {rounds}", p.games, survey, ids, seen, end])
    return _body(_rows(rows), 7, "Nobody has consented yet.")


def _counts(view: StudyView, live: int) -> str:
    people = view.people.total
    games = view.games
    over = sum(n for status, n in games.items() if status != "playing")
    flagged = games.get("flagged", 0)
    fallbacks = (
        ""
        if view.fallbacks is None
        else f" · matchmaking fallbacks: {view.fallbacks} ({view.fallbacks_here} on this process)"
    )
    return (
        f"{_n(people, 'participant')} · {_n(live, 'live game')} · "
        f"{over} finished ({flagged} flagged or abandoned){fallbacks}"
    )


def _n(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def admin_page(arena: Arena, form: StudyForm, live: list[dict[str, Any]], view: StudyView) -> str:
    """`live`: the live games to list (of every process, when there are several); `view`:
    the study's participants and counts (admin_people.py)."""
    done = arena.finished
    live_rows = "".join(
        f"<tr><td>{_game_link(g['game'])}</td>"
        + "".join(
            f"<td>{escape(str(c))}</td>"
            for c in (g["mode"], g["messages"], _since(g["started_at"]), _owner(g, view.process))
        )
        + "</tr>"
        for g in live
    )
    count_rows = _rows([[m, a, n] for (m, a), n in sorted(done.per_witness.items())])
    memory = (
        "every finished game is in memory (no store: it is the only copy)"
        if done.keep is None
        else "the store holds every game; the table per AI witness counts this process's"
    )
    # A kind's own files (the live ITT's judgements), as its kit declares (mode_kits.py).
    itt_link = "".join(f' · <a href="{p}">{label}</a>' for p, label in downloads(arena.setup.modes))
    shown = len(view.people.newest)
    listed = (
        f"the newest {shown} of {view.people.total}"
        if shown < view.people.total
        else f"all {shown}"
    )
    scope = view.scope
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Turing Lab arena · admin</title>
<link rel="stylesheet" href="/static/arena.css"></head>
<body class="admin"><main class="card wide">
<h1>Arena admin</h1>
<p>{escape(_counts(view, len(live)))}</p>
<p><a href="/admin/export.json">export (JSON)</a> ·
<a href="/admin/export/study.jsonl">study file for <code>turinglab report</code></a>{itt_link}</p>
<p class="muted">{escape(memory)}.</p>
<h2>Study</h2>
{_study_section(arena, form)}
<h2>Live games</h2>
<div class="table-scroll"><table><thead><tr><th>game</th><th>mode</th><th>messages</th>
<th>started</th><th>process</th></tr></thead>
<tbody>{_body(live_rows, 5, "No game is being played.")}</tbody></table></div>
<h2>Participants</h2>
<p class="muted">{escape(listed)}, newest first{escape(f" ({scope})" if scope else "")}; rounds
as the study counts them (practice, abandoned and flagged games do not count); recruitment ids
as their link gave them.</p>
<div class="table-scroll"><table><thead><tr><th>participant</th><th>study rounds</th>
<th>games</th><th>survey</th><th>recruitment ids</th><th>since</th><th>end (code given)</th>
</tr></thead>
<tbody>{_participant_rows(view, arena.setup.settings.rounds)}</tbody></table></div>
<h2>Finished games (the newest {FINISHED_LISTED}, this process)</h2>
<div class="table-scroll"><table><thead><tr><th>game</th><th>mode</th><th>status</th>
<th>verdict</th><th>confidence</th><th>correct</th><th>reason</th></tr></thead>
<tbody>{_finished_rows(arena)}</tbody></table></div>
<h2>Finished games per AI witness (this process)</h2>
<div class="table-scroll"><table><thead><tr><th>mode</th><th>AI witness</th><th>games</th>
</tr></thead><tbody>{_body(count_rows, 3, "No game has finished here yet.")}</tbody></table></div>
</main></body></html>"""


def transcript_page(game: dict[str, Any], csrf: str, can_end: str | None) -> str:
    """One game as the admin sees it: every seat and message, refreshed every few seconds
    while it is live, with a form to end it (`can_end`: why it cannot be ended here)."""
    live = game.get("status") is None
    seats = _rows(
        [
            [seat, who.get("kind", ""), who.get("participant") or who.get("agent") or ""]
            for seat, who in game["seats"].items()
        ]
    )
    start = float(game["started_at"])
    said = _rows(
        [
            [f"{float(m['at']) - start:.1f} s", m["channel"], m["sender"], m["text"]]
            for m in game["messages"]
        ]
    )
    refresh = '<meta http-equiv="refresh" content="3">' if live else ""
    outcome = ""
    if not live:
        verdict, confidence, right, reason = _outcome(game)
        outcome = (
            "<h2>Verdict</h2><table><thead><tr><th>verdict</th><th>confidence</th>"
            "<th>correct</th><th>reason</th></tr></thead><tbody>"
            + _rows([[verdict, confidence, right, reason]])
            + "</tbody></table>"
        )
    state = "live" if live else f"ended: {game.get('status')}"
    flags = "; ".join(str(f) for f in game.get("flags") or [])
    if not live:
        end = ""
    elif can_end is not None:
        end = f'<p class="muted">{escape(can_end)}</p>'
    else:
        action = f"/admin/game/{escape(game['game'])}/end"
        end = f"""<form method="post" action="{action}" class="study-form">
<input type="hidden" name="csrf" value="{escape(csrf)}">
<label><span>End this game now (it is flagged and does not count). Reason, for the record:</span>
<input name="reason" required maxlength="300" autocomplete="off"></label>
<button type="submit" class="danger">End the game</button></form>"""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">{refresh}
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Turing Lab arena · game {escape(game["game"])}</title>
<link rel="stylesheet" href="/static/arena.css"></head>
<body class="admin"><main class="card wide">
<p><a href="/admin">← admin</a></p>
<h1>Game {escape(game["game"])}</h1>
<p>{escape(str(game.get("mode")))} · {escape(state)} · started {_since(start)}
{f" · flags: {escape(flags)}" if flags else ""}</p>
{end}{outcome}
<h2>Seats</h2>
<table><thead><tr><th>seat</th><th>kind</th><th>who</th></tr></thead><tbody>{seats}</tbody></table>
<h2>Transcript</h2>
<div class="table-scroll"><table class="transcript"><thead><tr><th>at</th><th>channel</th>
<th>sender</th><th>text</th></tr></thead><tbody>{said}</tbody></table></div>
</main></body></html>"""

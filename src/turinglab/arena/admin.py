"""The admin page: live games, counts per AI witness and mode, the export link.

Server-rendered with every value escaped; reachable only with the admin password (app.py).
"""

from __future__ import annotations

from collections import Counter
from html import escape
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from turinglab.arena.hub import Arena


def _rows(cells: list[list[object]]) -> str:
    return "".join(
        "<tr>" + "".join(f"<td>{escape(str(c))}</td>" for c in row) + "</tr>" for row in cells
    )


def admin_page(arena: Arena) -> str:
    live = arena.live_games()
    done = arena.finished
    per_witness: Counter[tuple[str, str]] = Counter()
    for game in done:
        for seat in game["seats"].values():
            if seat["kind"] == "ai":
                per_witness[(game["mode"], seat["agent"])] += 1
    flagged = sum(1 for g in done if g["flags"])
    live_rows = _rows([[g["game"], g["mode"], g["messages"]] for g in live])
    count_rows = _rows([[m, a, n] for (m, a), n in sorted(per_witness.items())])
    live_itt = any(m.game.name == "live-itt" for m in arena.setup.modes)
    itt_link = (
        ' · <a href="/admin/export/live-itt.csv">live-test judgements for '
        "<code>turinglab itt score</code></a>"
        if live_itt
        else ""
    )
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Turing Lab arena · admin</title>
<link rel="stylesheet" href="/static/arena.css"></head>
<body class="admin"><main class="card wide">
<h1>Arena admin</h1>
<p>{len(arena.sessions)} participants · {len(live)} live games · {len(done)} finished
({flagged} flagged) · <a href="/admin/export.json">export (JSON)</a> ·
<a href="/admin/export/study.jsonl">study file for <code>turinglab report</code></a>{itt_link}</p>
<h2>Live games</h2>
<table><thead><tr><th>game</th><th>mode</th><th>messages</th></tr></thead>
<tbody>{live_rows}</tbody></table>
<h2>Finished games per AI witness</h2>
<table><thead><tr><th>mode</th><th>AI witness</th><th>games</th></tr></thead>
<tbody>{count_rows}</tbody></table>
</main></body></html>"""

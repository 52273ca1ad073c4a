"""Finished live integrative-test sessions (games/live_itt.py) as ITT judgements, from the
games' records (store/arena_records.py), so `turinglab itt score` reads the live test as it
reads offline judging. Here, below the arena and the ITT exports, because both read it."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from turinglab.games.live_itt import JUDGE, LABELS, SIDES, LiveITTGame
from turinglab.games.spec import FINISHED
from turinglab.itt.judgements import JudgementRow


def live_itt_judgements(finished: Iterable[Mapping[str, Any]]) -> list[JudgementRow]:
    """Finished live-itt study sessions as ITT judgements: per session, one row for the human
    agent and one for the AI agent, labelled H for the side the judge called human and M for
    the other. `length` is the number of exchanges the judge saw; `task` is live-<condition>;
    `rt` the seconds from the last answer of the last exchange to the verdict (for `itt score
    --min-rt`). Practice, flagged and unfinished sessions are left out."""
    rows = []
    for game in finished:
        trial = game.get("trial") or {}
        if game.get("solo") or game.get("flags") or trial.get("game") != LiveITTGame.name:
            continue
        verdicts = [j for j in game["judgements"] if j["kind"] == "verdict"]
        if game.get("status") != FINISHED or not verdicts:
            continue
        seats, params = trial["seats"], trial["params"]
        called_human = verdicts[-1]["verdict"]
        rt = _verdict_seconds(game, verdicts[-1].get("created_at"))
        for seat in SIDES:
            human = seat == params["human_seat"]
            rows.append(
                JudgementRow(
                    judge=seats[JUDGE],
                    judge_type="human",
                    item=f"{trial['key']}/{LABELS[SIDES.index(seat)]}",
                    source="human" if human else "machine",
                    model=None if human else seats[seat],
                    label="H" if seat == called_human else "M",
                    task=f"live-{params['condition']}",
                    length=int(params["exchanges"]),
                    rt=rt,
                )
            )
    return rows


def _verdict_seconds(game: Mapping[str, Any], made: float | None) -> float | None:
    """Seconds from the last message before the verdict (the last answer the judge saw) to
    the verdict; None when the record lacks the times."""
    if made is None:
        return None
    said = [m["at"] for m in game["messages"] if m.get("at") is not None and m["at"] <= made]
    return round(made - max(said), 3) if said else None

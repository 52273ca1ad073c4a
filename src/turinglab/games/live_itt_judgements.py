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
    the other. `length` is the number of exchanges the judge saw; `task` is live-<condition>.
    Practice, flagged and unfinished sessions are left out."""
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
                )
            )
    return rows

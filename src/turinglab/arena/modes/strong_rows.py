"""Arena STT sessions as rows of the STT preference table (turinglab.human.strong)."""

from __future__ import annotations

from typing import Any

from turinglab.games.strong import INVESTIGATOR, SYSTEM, TIE


def stt_rows(finished: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Arena STT sessions as rows of the STT preference table (turinglab.human.strong), so the
    arena's sessions go straight into `stt_scores` / `stt_verdicts`. People appear by their
    anonymous agent id ("person:<id>"); practice and flagged sessions are left out."""
    rows = []
    for game in finished:
        trial = game["trial"]
        if game["solo"] or game["flags"] or trial["game"] != "strong":
            continue
        seats = trial["seats"]
        sides = ";".join(a for s, a in seats.items() if s != INVESTIGATOR)
        for j in game["judgements"]:
            if j["kind"] == "preference":
                rows.append(
                    {
                        "session": trial["key"],
                        "turn": j["turn"],
                        "investigator": seats[INVESTIGATOR],
                        "system": seats[SYSTEM],
                        "choice": TIE if j["tie"] else seats[j["choice"]],
                        "sides": sides,
                    }
                )
    return rows

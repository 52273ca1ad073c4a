"""Topic conversations people held in the arena (arena/modes/itt_chat_mode.py) as ITT dataset rows.

One row per message, as `turinglab run`'s conversations are (itt/generate.conversation_rows),
but each side's `source` is what sat there: a person (`human`, `agent` their anonymous arena
id) or an AI (`machine`, `agent` the agent's name). Only finished study conversations count:
practice, flagged (a side stopped answering, an AI failed) and unfinished ones are left out,
since a conversation cut short is not the paper's stimulus."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from turinglab.games.conversation import SEATS
from turinglab.games.spec import FINISHED
from turinglab.itt.dataset import Response


@dataclass(frozen=True)
class ArenaConversations:
    rows: list[Response]
    conversations: int  # kept
    left_out: int  # unfinished, flagged or practice

    def kinds(self) -> dict[str, int]:
        """Conversations per kind (H-H, H-M): people with people, people with machines."""
        sides: dict[str, set[str]] = {}
        for r in self.rows:
            sides.setdefault(str(r.conversation), set()).add("H" if r.source == "human" else "M")
        out: dict[str, int] = {}
        for kinds in sides.values():
            key = "H-H" if kinds == {"H"} else "M-M" if kinds == {"M"} else "H-M"
            out[key] = out.get(key, 0) + 1
        return out


def is_conversation(game: Mapping[str, Any]) -> bool:
    return (game.get("trial") or {}).get("game") == "conversation"


def arena_conversations(games: Iterable[Mapping[str, Any]], prefix: str) -> ArenaConversations:
    """Rows of every finished study conversation among `games` (LiveGame.record() shape)."""
    rows: list[Response] = []
    kept = left_out = 0
    for game in games:
        if not is_conversation(game):
            continue
        if game.get("solo") or game.get("flags") or game.get("status") != FINISHED:
            left_out += 1
            continue
        kept += 1
        trial = game["trial"]
        cid = f"{prefix}-{int(trial['index']):04d}"
        topic = str(trial["params"]["topic"])
        said = [m for m in game["messages"] if m["sender"] in SEATS]
        for turn, m in enumerate(said):
            seat = game["seats"][m["sender"]]
            human = seat["kind"] == "human"
            rows.append(
                Response(
                    item=f"{cid}-{turn:02d}",
                    task="conversation",
                    stimulus_id=cid,
                    stimulus=topic,
                    source="human" if human else "machine",
                    agent=str(seat["participant"] if human else seat["agent"]),
                    text=m["text"] or "…",
                    conversation=cid,
                    turn=turn,
                    speaker=m["sender"],
                    topic=topic,
                )
            )
    return ArenaConversations(rows, kept, left_out)

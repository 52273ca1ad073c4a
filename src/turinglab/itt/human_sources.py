"""Human responses that ship offline.

Conversations: the `chitchat-dataset` PyPI package (BYU PCC lab's Chit Chat Challenge, ~7,000
two-person chats collected from people). Each of our messages is one turn of theirs: the
consecutive utterances one person sent before the other replied, joined with a space. Our
`agent` is "chitchat:" + the first 8 characters of their anonymous sender id, and the row keeps
the dataset's conversation key and message index (`source_ref`), so every human response can
be traced to the exact place it came from.

Word association: no package on the PyPI list we can use ships human association norms (we
looked for "association", "swow", "norms"), so the word-association demo is machine-only.
"""

from __future__ import annotations

import random
from typing import Any

from turinglab.extras import require
from turinglab.itt.dataset import Response

CHITCHAT = "chitchat-dataset"


def _load_chitchat() -> dict[str, Any]:
    chitchat_dataset = require("itt", "chitchat_dataset", "human conversations (Chit-Chat)")
    return dict(chitchat_dataset.Dataset())


def chitchat_conversations(count: int, exchanges: int, seed: int) -> list[Response]:
    """`count` chats with at least `exchanges` turns, chosen with `seed`, cut to `exchanges`."""
    data = _load_chitchat()
    usable = sorted(k for k, v in data.items() if len(v["messages"]) >= exchanges)
    if len(usable) < count:
        raise ValueError(f"only {len(usable)} chitchat conversations have {exchanges} turns")
    rows: list[Response] = []
    for key in random.Random(seed).sample(usable, count):
        conv = data[key]
        cid = f"hh-{key[:8]}"
        speakers: dict[str, str] = {}
        for turn, message in enumerate(conv["messages"][:exchanges]):
            sender = message[0]["sender"]
            speakers.setdefault(sender, "A" if not speakers else "B")
            rows.append(
                Response.model_validate(
                    {
                        "item": f"{cid}-{turn:02d}",
                        "task": "conversation",
                        "stimulus_id": cid,
                        "stimulus": conv.get("prompt"),
                        "source": "human",
                        "agent": f"chitchat:{sender[:8]}",
                        "text": " ".join(u["text"] for u in message).strip() or "…",
                        "conversation": cid,
                        "turn": turn,
                        "speaker": speakers[sender],
                        "source_ref": f"{CHITCHAT} dataset.json[{key}].messages[{turn}]",
                    }
                )
            )
    return rows

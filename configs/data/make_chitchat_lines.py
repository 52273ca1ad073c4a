"""Make chitchat-lines.json: what one real person wrote in a few chitchat-dataset conversations.

The human stand-in of the offline human-game configs replays these lines (real human chat text,
from the `chitchat-dataset` PyPI package), so a batch simulation has a human-written side.
Run: python configs/data/make_chitchat_lines.py
"""

from __future__ import annotations

import json
from pathlib import Path

import chitchat_dataset

HERE = Path(__file__).parent


def main(conversations: int = 6, min_chars: int = 8) -> None:
    data = dict(chitchat_dataset.Dataset())
    lines: list[str] = []
    sources: list[str] = []
    for key in sorted(data)[:conversations]:
        first = data[key]["messages"][0][0]["sender"]
        for turn in data[key]["messages"]:
            text = " ".join(u["text"] for u in turn if u["sender"] == first).strip()
            if len(text) >= min_chars and len(text) <= 300:
                lines.append(text)
        sources.append(key)
    (HERE / "chitchat-lines.json").write_text(json.dumps(lines, indent=0) + "\n")
    print(f"{len(lines)} lines by the first speaker of chitchat-dataset conversations {sources}")


if __name__ == "__main__":
    main()

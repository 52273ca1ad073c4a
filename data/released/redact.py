"""Rebuilds the released-data files here from the kreimanlab/TuringTest originals, less
what names a person: python redact.py ORIGINAL.csv [...]

Each original (commit d6ef4de8955b774b0035f6ec08c58f3ee238dd3d, `Conversations/Participants
results - datasets/`) is checked against the size and SHA-256 it had when transcribed (below),
then written here with its IP addresses emptied and each Prolific participant/session id replaced
by the first 12 hex digits of its SHA-256 (so one person's rows still match each other). Nothing
else changes, byte for byte: the files read exactly as the originals do in every other field."""

import hashlib
import re
import sys
from pathlib import Path

SOURCES = {  # name: (characters, SHA-256 of the UTF-8 text) of the original
    "new_results_prolific.csv": (
        1047520,
        "ffc50155961bac47f394c8bdd82e6c95e4c4811f1006a071544e3754cf1cc64b",
    ),
    "prolific_may30.csv": (
        1179835,
        "489b768a215365aff89c616355db22d1749b112bee96e789d94e4b419c1b9993",
    ),
}
_IP = re.compile(r"^((?:[^,\n]*,){4})\d{1,3}(?:\.\d{1,3}){3},", re.MULTILINE)
_ID = re.compile(r'(""(?:prolific_pid|session_id)"": "")([^"]+)("")')


def _pseudonym(found: re.Match[str]) -> str:
    digest = hashlib.sha256(found.group(2).encode()).hexdigest()[:12]
    return f"{found.group(1)}{digest}{found.group(3)}"


def redacted(text: str) -> str:
    return _ID.sub(_pseudonym, _IP.sub(r"\1,", text))


def main(paths: list[str]) -> None:
    for path in paths:
        name = Path(path).name
        with open(path, encoding="utf-8", newline="") as source:  # keep its CRLF row ends
            text = source.read()
        size, sha = SOURCES[name]
        got = hashlib.sha256(text.encode()).hexdigest()
        if (len(text), got) != (size, sha):
            sys.exit(f"{path}: {len(text)} characters, sha256 {got}; expected {size}, {sha}")
        out = Path(__file__).with_name(name)
        out.write_text(redacted(text), encoding="utf-8", newline="")
        print(f"{out}: written from {path} ({size} characters, sha256 {sha[:16]}…)")


if __name__ == "__main__":
    main(sys.argv[1:])

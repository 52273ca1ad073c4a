"""What a person types, made safe to store and to show: no control or bidi-override characters.

A NUL breaks PostgreSQL text columns and some viewers; the other C0/C1 controls (bar the line
break and tab a textarea gives) are invisible noise; and bidi embeddings, overrides and isolates
(U+202A-202E, U+2066-2069) or marks (U+200E/F, U+061C) can make a message — or the admin's
transcript, or a cell of the export — read in another order than it was written ("Trojan
Source", CVE-2021-42574). They are all dropped, as are lone surrogates (a JSON "\\ud800" is not
text and cannot be stored as UTF-8), the byte-order mark and the interlinear annotation marks.
CR LF and lone CR become LF; the Unicode line and paragraph separators, which end a line in
JavaScript strings, do too. Joiners (U+200C/D) stay: emoji sequences and several scripts need
them.

Lengths count UTF-16 code units, as the page's `maxlength` and JavaScript's `.length` do: an
emoji outside the Basic Multilingual Plane counts two, in the page's counter and here alike.
"""

from __future__ import annotations

import re
import unicodedata

# Bidi controls: embeddings/overrides, isolates, and the implicit marks (LRM, RLM, ALM).
BIDI_CONTROLS = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)] + [chr(c) for c in range(0x2066, 0x206A)]
) | {"\u200e", "\u200f", "\u061c"}
_OTHER_DROPPED = frozenset({"\ufeff", "\ufff9", "\ufffa", "\ufffb"})
_KEPT_CONTROLS = frozenset({"\n", "\t"})
_LINE_BREAKS = re.compile(r"\r\n?|[\u2028\u2029\x85]")


def clean(text: str) -> str:
    """`text` without control, bidi-control or lone-surrogate characters (see above)."""
    text = _LINE_BREAKS.sub("\n", text)
    return "".join(ch for ch in text if _kept(ch))


def _kept(ch: str) -> bool:
    if ch in _KEPT_CONTROLS:
        return True
    if ch in BIDI_CONTROLS or ch in _OTHER_DROPPED:
        return False
    return unicodedata.category(ch) not in ("Cc", "Cs")


def utf16_length(text: str) -> int:
    """The length a browser gives `text` (code units): two for each astral character."""
    return len(text) + sum(1 for ch in text if ord(ch) > 0xFFFF)

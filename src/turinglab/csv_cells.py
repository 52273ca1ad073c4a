"""Text cells of CSV exports made safe to open in a spreadsheet, reversibly.

A participant's reason `=cmd|' /C calc'!A0` written verbatim into study.csv is a formula to
Excel, LibreOffice or Google Sheets (CSV injection). As OWASP advises, a text cell that begins
with = + - @, a tab or a carriage return gets a leading single quote, which spreadsheets show
as text and hide. Numbers (typed, or text that reads as one: -0.5) are left alone. A text that
already begins with a quote followed by one of those characters (or another quote) gets one
more, so `restored` gives back exactly what was written. Only CSV is touched: JSONL and Parquet
keep the raw text.
"""

from __future__ import annotations

from typing import Any

TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
QUOTE = "'"


def neutralised(value: Any) -> Any:
    """The cell as a CSV export writes it."""
    if not isinstance(value, str) or not value:
        return value
    if value.startswith(TRIGGERS):
        return value if _number(value) else QUOTE + value
    if value.startswith(QUOTE) and value[1:].startswith((*TRIGGERS, QUOTE)):
        return QUOTE + value
    return value


def restored(value: Any) -> Any:
    """A cell read back from one of our CSV exports, as it was before `neutralised`."""
    if (
        isinstance(value, str)
        and value.startswith(QUOTE)
        and value[1:].startswith((*TRIGGERS, QUOTE))
    ):
        return value[1:]
    return value


def _number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text

"""Record browsers with compressed lazy fields (report/html.py): what the page carries."""

from __future__ import annotations

import base64
import gzip
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from turinglab.report.html import Page, RecordBrowser


def _records(n: int) -> Iterator[dict[str, Any]]:
    for i in range(n):
        yield {
            "trial": i,
            "pair": f"a{i % 3} → b",
            "messages": [{"text": f"message {i} </script><b>x</b>"} for _ in range(5)],
        }


def _inflate(chunk: str) -> Any:
    return json.loads(gzip.decompress(base64.b64decode(chunk)).decode("utf-8"))


def test_lazy_fields_leave_the_index_and_round_trip_in_chunks() -> None:
    consumed = []

    def watched() -> Iterator[dict[str, Any]]:
        for r in _records(7):
            consumed.append(r["trial"])
            yield r

    browser = RecordBrowser(
        watched(), columns=[("trial", "trial")], lazy=("messages",), chunk_size=3
    )
    packed = browser.pack()
    assert consumed == list(range(7))  # the generator was read once, in order
    assert packed.index == [{"trial": i, "pair": f"a{i % 3} → b"} for i in range(7)]
    assert len(packed.chunks) == 3  # 3 + 3 + 1
    inflated = [row for chunk in packed.chunks for row in _inflate(chunk)]
    assert inflated == [{"messages": r["messages"]} for r in _records(7)]
    assert packed.raw_bytes > sum(len(c) for c in packed.chunks)  # compression paid off


def test_page_carries_compressed_blocks_and_no_raw_text() -> None:
    page = Page("t")
    browser = RecordBrowser(_records(50), columns=[("trial", "trial")], lazy=("messages",))
    page.section("Transcripts").records(browser)
    html = page.render()
    assert "message 3" not in html and "<b>x</b>" not in html
    blocks = re.findall(
        r'<script type="application/octet-stream" id="([^"]+)">([^<]*)</script>', html
    )
    assert [ident for ident, _ in blocks] == ["transcripts-browser-0-chunk-0"]
    assert _inflate(blocks[0][1])[3]["messages"][0]["text"] == "message 3 </script><b>x</b>"
    data = re.search(r'id="transcripts-browser-0-data">([^<]*)</script>', html)
    assert data is not None
    meta = json.loads(data.group(1))
    assert meta["chunks"] == 1 and meta["chunkSize"] == 200 and meta["spec"]["lazy"] == ["messages"]
    assert _inflate(meta["records"])[49] == {"trial": 49, "pair": "a1 → b"}  # the list, packed


def test_without_lazy_fields_records_are_inline_as_before() -> None:
    page = Page("t")
    page.section("Transcripts").records(RecordBrowser(_records(2), columns=[("trial", "trial")]))
    html = page.render()
    assert "message 1" in html and "application/octet-stream" not in html
    assert "</script><b>" not in html  # still escaped for the script element


def test_chunk_size_must_be_positive() -> None:
    with pytest.raises(ValueError, match="chunk_size"):
        RecordBrowser([], columns=[], chunk_size=0)

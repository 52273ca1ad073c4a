"""A small builder for self-contained HTML reports: no CDN, no external requests.

A `Page` holds sections; a section holds paragraphs, notes, tables (each cell may carry hover
text, e.g. a confidence interval), inline SVG figures and record browsers. A `RecordBrowser`
embeds its records as JSON and renders them client-side with vanilla JS that only ever sets
`textContent`, so untrusted text (transcripts) cannot inject markup. Everything else that
reaches the page goes through `html.escape`; only SVG produced by our own figures is inlined.

Bulky record fields (transcripts) can be `lazy`: they leave the list's JSON and go, in chunks of
`chunk_size` records, into gzip-compressed base64 blocks that the page inflates with the
browser's own DecompressionStream when a record is opened or the text is searched (the list
itself is then compressed as one block, inflated when the page opens). The page
stays one offline file, a fraction of the size, and the records are consumed one at a time
while the page is built, so a large run is never held as Python objects all at once.
"""

from __future__ import annotations

import base64
import html
import json
import re
import zlib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

_ASSETS = resources.files("turinglab.report") / "assets"


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


def json_for_script(data: Any) -> str:
    """JSON that is safe inside <script type="application/json">: no '<', '>' or '&'."""
    text = json.dumps(data, ensure_ascii=False, default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


@dataclass(frozen=True)
class Cell:
    """A table cell with optional hover text (shown as a tooltip) and an optional detail
    printed under the value (e.g. its 95% CI, so a printed page or a phone shows it too)."""

    text: str
    hover: str | None = None
    numeric: bool = False
    detail: str | None = None


CellValue = Cell | str | int | float | None


def _cell_html(value: CellValue, tag: str = "td") -> str:
    if not isinstance(value, Cell):
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        value = Cell("–" if value is None else str(value), numeric=numeric)
    classes = ["num"] * value.numeric + ["hover"] * bool(value.hover)
    attrs = f' class="{" ".join(classes)}"' if classes else ""
    if value.hover:
        attrs += f' title="{esc(value.hover)}"'
    detail = f'<span class="detail">{esc(value.detail)}</span>' if value.detail else ""
    return f"<{tag}{attrs}>{esc(value.text)}{detail}</{tag}>"


@dataclass(frozen=True)
class Filter:
    """A drop-down over the distinct values of one record field."""

    key: str
    label: str


@dataclass(frozen=True)
class Panel:
    """One part of a record's detail view.

    kind "fields": `keys` shown as a definition list; "conversations": `key` holds
    {participant: [{role, content}]}, shown side by side; "log": `key` holds a list of dicts,
    shown as a table of `keys` (list values are joined with ", ").
    """

    kind: str
    title: str
    key: str = ""
    keys: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("fields", "conversations", "log"):
            raise ValueError(f"panel kind must be fields, conversations or log, not {self.kind!r}")


def gzip_base64(data: Any) -> str:
    """`data` as JSON, gzip-compressed (what DecompressionStream("gzip") reads), in base64."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 31)  # wbits 31: a gzip header and trailer
    raw = json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":"))
    return base64.b64encode(packer.compress(raw.encode("utf-8")) + packer.flush()).decode("ascii")


@dataclass
class PackedRecords:
    """A browser's records ready for the page: the list fields as JSON-able dicts, and the
    lazy fields as compressed chunks (chunk k holds records k*chunk_size … as a JSON list)."""

    index: list[dict[str, Any]]
    chunks: list[str]
    chunk_size: int
    raw_bytes: int  # the lazy fields' JSON before compression, for the page's note


@dataclass
class RecordBrowser:
    """Records embedded in the page with client-side filters, a list and a detail view.

    `records` may be any iterable (a generator keeps memory flat); it is read once, when the
    section is rendered into the page.
    """

    records: Iterable[Mapping[str, Any]]
    columns: Sequence[tuple[str, str]]  # (record key, column label) of the list view
    filters: Sequence[Filter] = ()
    panels: Sequence[Panel] = ()
    search: bool = True  # a free-text box over every string in a record
    page_size: int = 100
    lazy: tuple[str, ...] = ()  # fields compressed into chunks, inflated in the page on demand
    chunk_size: int = 200

    def __post_init__(self) -> None:
        if self.chunk_size < 1:
            raise ValueError("chunk_size must be at least 1")

    def pack(self) -> PackedRecords:
        """Split every record into its list fields and its lazy fields, compressing the lazy
        ones a chunk at a time."""
        index: list[dict[str, Any]] = []
        chunks: list[str] = []
        pending: list[dict[str, Any]] = []
        raw_bytes = 0
        for record in self.records:
            index.append({k: v for k, v in record.items() if k not in self.lazy})
            if self.lazy:
                pending.append({k: record.get(k) for k in self.lazy})
                if len(pending) == self.chunk_size:
                    raw_bytes += _json_size(pending)
                    chunks.append(gzip_base64(pending))
                    pending = []
        if pending:
            raw_bytes += _json_size(pending)
            chunks.append(gzip_base64(pending))
        return PackedRecords(index, chunks, self.chunk_size, raw_bytes)

    def spec(self) -> dict[str, Any]:
        return {
            "columns": [{"key": k, "label": label} for k, label in self.columns],
            "filters": [{"key": f.key, "label": f.label} for f in self.filters],
            "panels": [
                {"kind": p.kind, "title": p.title, "key": p.key, "keys": list(p.keys)}
                for p in self.panels
            ],
            "search": self.search,
            "pageSize": self.page_size,
            "lazy": list(self.lazy),
        }


def _json_size(data: Any) -> int:
    return len(json.dumps(data, ensure_ascii=False, default=str, separators=(",", ":")))


@dataclass
class Section:
    title: str
    anchor: str
    parts: list[str] = field(default_factory=list)
    _browsers: list[tuple[str, RecordBrowser]] = field(default_factory=list)

    def paragraph(self, text: str) -> Section:
        self.parts.append(f"<p>{esc(text)}</p>")
        return self

    def note(self, text: str) -> Section:
        """A muted one-liner, e.g. why a part is missing."""
        self.parts.append(f'<p class="note">{esc(text)}</p>')
        return self

    def heading(self, text: str) -> Section:
        self.parts.append(f"<h3>{esc(text)}</h3>")
        return self

    def table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence[CellValue]],
        *,
        caption: str | None = None,
        css_class: str = "",
    ) -> Section:
        for i, row in enumerate(rows):
            if len(row) != len(columns):
                raise ValueError(f"table row {i} has {len(row)} cells for {len(columns)} columns")
        head = "".join(f"<th>{esc(c)}</th>" for c in columns)
        body = "".join("<tr>" + "".join(_cell_html(v) for v in row) + "</tr>" for row in rows)
        # The caption sits above the scrolling box, not inside the table: a table wider than a
        # phone scrolls sideways, and a <caption> would scroll (and clip) with it.
        cap = f'<p class="table-caption">{esc(caption)}</p>' if caption else ""
        self.parts.append(
            f'{cap}<div class="table-wrap"><table class="data {esc(css_class)}">'
            f"<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
        )
        return self

    def figure(
        self, svg: str, caption: str, files: Mapping[str, Path | str] | None = None
    ) -> Section:
        """An inline SVG (trusted: made by our figures module) with caption and file links."""
        if not svg.lstrip().startswith("<svg"):
            raise ValueError("figure() needs an <svg> element (see figures.figure_svg)")
        links = ""
        if files:
            links = " · ".join(
                f'<a href="{esc(Path(p).name)}">{esc(kind.upper())}</a>'
                for kind, p in files.items()
            )
            links = f' <span class="files">({links})</span>'
        self.parts.append(f"<figure>{svg}<figcaption>{esc(caption)}{links}</figcaption></figure>")
        return self

    def records(self, browser: RecordBrowser) -> Section:
        """Embed a record browser; its records are read (and lazy fields compressed) now."""
        ident = f"{self.anchor}-browser-{len(self._browsers)}"
        self._browsers.append((ident, browser))
        packed = browser.pack()
        data = {
            "spec": browser.spec(),
            # With lazy fields the list itself is compressed too: at 16,200 trials it is most
            # of the page (5.4 of 6.7 MB) and shrinks about tenfold.
            "records": gzip_base64(packed.index) if browser.lazy else packed.index,
            "chunks": len(packed.chunks),
            "chunkSize": packed.chunk_size,
        }
        # base64 holds only [A-Za-z0-9+/=]: nothing that could close the script element.
        blocks = "".join(
            f'<script type="application/octet-stream" id="{esc(ident)}-chunk-{k}">{chunk}</script>'
            for k, chunk in enumerate(packed.chunks)
        )
        self.parts.append(
            f'<div class="browser" id="{esc(ident)}"></div>'
            f'<script type="application/json" id="{esc(ident)}-data">'
            f"{json_for_script(data)}</script>{blocks}"
        )
        return self

    def render(self) -> str:
        return (
            f'<section id="{esc(self.anchor)}"><h2>{esc(self.title)}</h2>'
            + "".join(self.parts)
            + "</section>"
        )


@dataclass
class Page:
    title: str
    metadata: Mapping[str, object] = field(default_factory=dict)
    sections: list[Section] = field(default_factory=list)

    def section(self, title: str, anchor: str | None = None) -> Section:
        taken = {s.anchor for s in self.sections}
        base = anchor or _slug(title)
        name, k = base, 2
        while name in taken:
            name, k = f"{base}-{k}", k + 1
        section = Section(title, name)
        self.sections.append(section)
        return section

    def render(self) -> str:
        css = (_ASSETS / "report.css").read_text(encoding="utf-8")
        script = (_ASSETS / "browser.js").read_text(encoding="utf-8")
        meta = "".join(
            f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in self.metadata.items() if v is not None
        )
        toc = "".join(
            f'<li><a href="#{esc(s.anchor)}">{esc(s.title)}</a></li>' for s in self.sections
        )
        stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
        # The CSP forbids every network fetch: the page must work from a file, offline.
        csp = (
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
            "img-src data:; font-src data:"
        )
        return (
            '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{esc(self.title)}</title><style>{css}</style></head><body>"
            f'<header><h1>{esc(self.title)}</h1><dl class="meta">{meta}</dl>'
            f'<p class="note">Generated {esc(stamp)} by turinglab. Self-contained: works offline.'
            "</p></header>"
            f"<nav><ol>{toc}</ol></nav><main>{''.join(s.render() for s in self.sections)}</main>"
            f"<script>{script}</script></body></html>\n"
        )

    def write(self, path: Path | str) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.render(), encoding="utf-8")
        return path

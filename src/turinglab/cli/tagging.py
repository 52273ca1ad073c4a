"""`turinglab tag …`: codebooks, GTT probe diagnostics and LLM tagging of human-judged games."""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from turinglab.cli.errors import fail

if TYPE_CHECKING:
    from turinglab.tagging.probe_rules import ProbeShares

# Commands import the tagging modules they use (they pull in pandas and scipy); the modes are
# spelled here for the help text and checked by TaggerConfig (a test keeps the two equal).
TAGGER_MODE_NAMES = ("per-code", "by-category", "batch")

tag_app = typer.Typer(
    help="Tag transcripts: codebooks, GTT probe shares, LLM tagging of games.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console(width=120)
JsonOption = Annotated[bool, typer.Option("--json", help="print JSON instead of tables")]


def _clean(x: Any) -> Any:
    """JSON without NaN: NaN becomes null."""
    if isinstance(x, float) and math.isnan(x):
        return None
    if isinstance(x, dict):
        return {k: _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    return x


@tag_app.command()
def codebook(
    name: Annotated[str, typer.Argument(help="strategies, reasons, gtt_probes or a YAML file")],
    as_json: JsonOption = False,
) -> None:
    """Show the codes of a codebook."""
    from turinglab.tagging.codebooks import CodebookError, load_codebook

    try:
        book = load_codebook(name)
    except CodebookError as err:
        raise fail(str(err)) from None
    if as_json:
        codes = [
            {"id": c.id, "label": c.label, "category": c.category, "description": c.description}
            for c in book.codes
        ]
        print(json.dumps({"name": book.name, "task": book.task, "codes": codes}, indent=2))
        return
    table = Table("category", "id", "label", "description", title=f"codebook {book.name}")
    for c in book.codes:
        table.add_row(c.category, c.id, c.label, c.description)
    console.print(table)


def _read_rows(path: Path) -> list[dict[str, Any]]:
    """GTT result rows from a JSONL export (one row per line) or a JSON list."""
    if not path.is_file():
        raise fail(f"{path}: no such file")
    text = path.read_text(encoding="utf-8")
    try:
        if text.lstrip().startswith("["):
            rows = json.loads(text)
        else:
            rows = [json.loads(line) for line in text.splitlines() if line.strip()]
    except json.JSONDecodeError as err:
        raise fail(f"{path}: not JSON or JSON lines: {err}") from None
    if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
        raise fail(f"{path}: expected GTT result rows (JSON objects)")
    return rows


@tag_app.command()
def probes(
    results: Annotated[Path, typer.Argument(help="GTT results exported as .jsonl or .json")],
    as_json: JsonOption = False,
) -> None:
    """Share of distinguisher question units per probe kind (rule-based, conservative)."""
    from turinglab.tagging.probe_rules import PROBE_CODES, probe_report

    rows = _read_rows(results)
    if not rows:
        raise fail(
            f"{results}: no result rows (the file is empty); export a run with --format jsonl"
        )
    try:
        report = probe_report(rows)
    except (ValueError, KeyError) as err:
        raise fail(f"{results}: {err}") from None
    if report.overall.n_units == 0:
        raise fail(f"{results}: {len(rows)} rows but no distinguisher question in any of them")
    if as_json:
        print(json.dumps(_clean(report.as_dict()), indent=2))
        return
    columns: dict[str, ProbeShares] = {"all turns": report.overall, "first turn": report.first_turn}
    columns.update(report.by_distinguisher)
    table = Table("probe", *columns, title="GTT question units by probe kind (share of units)")
    for code in PROBE_CODES:
        table.add_row(
            code, *(f"{s.share(code):.2f}" if s.n_units else "—" for s in columns.values())
        )
    table.add_row("units", *(str(s.n_units) for s in columns.values()), style="bold")
    console.print(table)


def _agent(name: str, config: Path | None) -> Any:
    from turinglab.agents.registry import AgentSetupError, build_agent
    from turinglab.config import EMBEDDED_AGENTS, ConfigError, load_config

    try:
        known = load_config(config).all_agents() if config else dict(EMBEDDED_AGENTS)
    except ConfigError as err:
        raise fail(str(err)) from None
    if name not in known:
        raise fail(f"unknown agent {name!r}; known: {', '.join(sorted(known))}")
    try:
        return build_agent(name, known[name])
    except AgentSetupError as err:
        raise fail(str(err)) from None


def _correct(row: dict[str, Any]) -> bool | None:
    """The interrogator was right about this witness (rows.txt §2)."""
    from turinglab.human.schema import parse_bool

    kind = row.get("witness_type")
    try:
        judged = parse_bool(row.get("judged_human"))  # raw file values: "False", "0", "no", …
    except ValueError:
        return None
    if judged is None or not isinstance(kind, str):
        return None
    return judged == (kind == "human")


@tag_app.command()
def games(
    table_path: Annotated[Path, typer.Argument(help="study table as .csv, .jsonl or .parquet")],
    codebook_name: Annotated[str, typer.Option("--codebook", help="codebook or YAML")] = (
        "strategies"
    ),
    agent_name: Annotated[str, typer.Option("--agent", help="tagging agent")] = "smollm2",
    config: Annotated[Path | None, typer.Option(help="config declaring the agent")] = None,
    mode: Annotated[str, typer.Option(help=f"one of {', '.join(TAGGER_MODE_NAMES)}")] = "per-code",
    seed: int = 0,
    out: Annotated[Path | None, typer.Option(help="write per-row codes here (.csv)")] = None,
    as_json: JsonOption = False,
) -> None:
    """Tag each judgement's conversation and reason with an LLM; share and accuracy per code."""
    import asyncio

    import pandas as pd

    from turinglab.agents.errors import AgentError
    from turinglab.human.schema import read_records
    from turinglab.tagging.codebooks import load_codebook
    from turinglab.tagging.llm_tagger import LLMTagger, TaggerConfig, TagItem, game_text
    from turinglab.tagging.summaries import code_summaries

    try:
        book = load_codebook(codebook_name)
        cfg = TaggerConfig(mode=mode, seed=seed)  # type: ignore[arg-type]
        if not table_path.is_file():
            raise ValueError(f"{table_path}: no such file")
        # CSV/JSONL are read as study files are (comment header lines allowed), without
        # requiring the columns only the statistics need.
        if table_path.suffix == ".parquet":
            df = pd.read_parquet(table_path)
        else:
            df, _lines = read_records(table_path)
        missing = {"game", "witness"} - set(df.columns)
        if missing:
            raise ValueError(f"{table_path}: missing column(s) {sorted(missing)}")
        rows = df.to_dict("records")
        items = [
            TagItem(
                f"{r['game']}|{r['witness']}",
                game_text(
                    r["transcript"] if isinstance(r.get("transcript"), str) else None,
                    r["reason"] if isinstance(r.get("reason"), str) else None,
                ),
            )
            for r in rows
        ]
    except ValueError as err:
        raise fail(str(err)) from None
    agent = _agent(agent_name, config)

    async def tag_all() -> list[Any]:
        try:
            return await LLMTagger(agent, book, cfg).tag(items)
        finally:
            await agent.aclose()  # an HTTP agent's session is closed, whatever happened

    try:
        results = asyncio.run(tag_all())
    except (AgentError, ValueError) as err:
        raise fail(str(err)) from None
    summaries = code_summaries(
        [r.codes for r in results],
        [_correct(r) for r in rows],
        book,
        unreadable=[r.unreadable_codes(book) for r in results],
    )
    if out is not None:
        pd.DataFrame(
            {
                "game": [r["game"] for r in rows],
                "witness": [r["witness"] for r in rows],
                "codes": [";".join(t.codes) for t in results],
                "unparseable": [";".join(t.unparseable) for t in results],
                "error": [t.error for t in results],
            }
        ).to_csv(out, index=False)
    if as_json:
        payload = {
            "codebook": book.name,
            "agent": agent_name,
            "rows": [
                {
                    "item": t.item_id,
                    "codes": t.codes,
                    "unparseable": t.unparseable,
                    "error": t.error,
                }
                for t in results
            ],
            "summary": [asdict(s) for s in summaries],
        }
        print(json.dumps(_clean(payload), indent=2))
        return
    table = Table(
        "code",
        "games",
        "readable",
        "unreadable",
        "share [95% CI]",
        "accuracy [95% CI]",
        title=book.name,
    )
    for s in summaries:
        table.add_row(
            s.code,
            str(s.k),
            str(s.n_games),
            str(s.n_unreadable),
            "—" if not s.n_games else f"{s.share:.2f} [{s.share_ci[0]:.2f}, {s.share_ci[1]:.2f}]",
            "—"
            if not s.n_scored
            else (f"{s.accuracy:.2f} [{s.accuracy_ci[0]:.2f}, {s.accuracy_ci[1]:.2f}]"),
        )
    console.print(table)
    flagged = sum(1 for t in results if not t.complete)
    if flagged:
        console.print(
            f"{flagged} of {len(results)} rows had unreadable replies or errors; a code whose "
            "answer could not be read counts as unreadable, not as absent."
        )
    if results and all(s.n_games == 0 for s in summaries):
        first = next((t.error for t in results if t.error), None)
        raise fail(
            f"no reply of agent {agent_name!r} could be read for any code of {len(results)} rows"
            + (f" (first error: {first})" if first else "")
        )

"""Export a run: results (one row per trial) as CSV, JSONL or Parquet; transcripts as JSONL."""

from __future__ import annotations

import csv
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from turinglab.csv_cells import neutralised
from turinglab.store.database import ResultRecord, Store

ExportFormat = Literal["csv", "jsonl", "parquet"]

RESULT_COLUMNS = [
    "run_id",
    "trial",
    "key",
    "variant",
    "actor",
    "distinguisher",
    "target",
    "x_is_target",
    "budget",
    "seed",
    "status",
    "verdict",
    "correct",
    "distinguisher_turns",
    "unknown_turns",
    "attempt_no",
    "calls",
    "tokens_in",
    "tokens_out",
    "distinguisher_model",
    "distinguisher_provider",
    "unknown_model",
    "unknown_provider",
    "no_answer_reason",
    "started_at",
    "finished_at",
    "first_distinguisher_message",
    "raw_final_message",
]


def _iso(ts: float | None) -> str | None:
    return None if ts is None else datetime.fromtimestamp(ts, UTC).isoformat()


def _design(r: ResultRecord) -> dict[str, Any]:
    """GTT's design facts and outcome columns (empty for other games)."""
    p = r.params
    return {
        "variant": p.get("variant"),
        "actor": p.get("actor"),
        "distinguisher": p.get("distinguisher"),
        "target": p.get("target"),
        "x_is_target": p.get("x_is_target"),
        "budget": p.get("budget"),
        "seed": r.seed,
        "status": r.status,
        "verdict": r.verdict,
        "correct": r.correct,
        "distinguisher_turns": r.extra.get("distinguisher_turns"),
        "unknown_turns": r.extra.get("unknown_turns"),
    }


def result_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    """GTT's columns; a run of another game (an arena study, say) leaves those it lacks empty."""
    rows = []
    for r in store.results(run_id):
        routes = r.routes or {}
        rows.append(
            {
                "run_id": run_id,
                "trial": r.idx,
                "key": r.key,
                **_design(r),
                "attempt_no": r.attempt_no,
                "calls": r.calls,
                "tokens_in": r.tokens_in,
                "tokens_out": r.tokens_out,
                "distinguisher_model": routes.get("distinguisher", {}).get("model"),
                "distinguisher_provider": routes.get("distinguisher", {}).get("provider"),
                "unknown_model": routes.get("unknown", {}).get("model"),
                "unknown_provider": routes.get("unknown", {}).get("provider"),
                "no_answer_reason": (r.details or {}).get("no_answer_reason"),
                "started_at": _iso(r.started_at),
                "finished_at": _iso(r.finished_at),
                "first_distinguisher_message": r.extra.get("first_distinguisher_message"),
                "raw_final_message": r.extra.get("raw_final_message"),
            }
        )
    return rows


def transcript_records(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Everything kept about each finished trial, each participant's view included."""
    envs: dict[str, dict[str, Any] | None] = {}
    out = []
    for r in store.results(run_id):
        env_id = r.environment_id
        if env_id is not None and env_id not in envs:
            envs[env_id] = store.environment(env_id)
        messages = [
            {
                "seq": m.seq,
                "channel": m.channel,
                "sender": m.sender,
                "visible_to": list(m.visible_to),
                "phase": m.phase,
                "text": m.text,
                "created_at": _iso(m.created_at),
                "latency_s": m.latency_s,
                "tokens_in": m.tokens_in,
                "tokens_out": m.tokens_out,
                "model": m.model,
                "provider": m.provider,
            }
            for m in store.transcript(r.attempt_id)
        ]
        out.append(
            {
                "run_id": run_id,
                "trial": r.idx,
                "key": r.key,
                **_design(r),
                "actor_prompt": r.extra.get("actor_prompt"),
                "first_distinguisher_message": r.extra.get("first_distinguisher_message"),
                "raw_final_message": r.extra.get("raw_final_message"),
                "histories": r.histories,
                "routes": r.routes,
                "details": r.details,
                "messages": messages,
                "environment": envs.get(env_id) if env_id else None,
            }
        )
    return out


def export_run(store: Store, run_id: str, out_dir: Path, fmt: ExportFormat) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = result_rows(store, run_id)
    results_path = out_dir / f"{run_id}-results.{fmt}"
    if fmt == "csv":
        with results_path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=RESULT_COLUMNS)
            writer.writeheader()
            writer.writerows({k: neutralised(v) for k, v in row.items()} for row in rows)
    elif fmt == "jsonl":
        _write_jsonl(results_path, rows)
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = (
            pa.Table.from_pylist(rows)
            if rows
            else pa.table({c: pa.array([], pa.string()) for c in RESULT_COLUMNS})
        )
        pq.write_table(table, results_path)
    transcripts_path = out_dir / f"{run_id}-transcripts.jsonl"
    _write_jsonl(transcripts_path, transcript_records(store, run_id))
    spend_path = out_dir / f"{run_id}-spend.csv"
    with spend_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=SPEND_COLUMNS)
        writer.writeheader()
        writer.writerows(spend_rows(store, run_id))
    return [results_path, transcripts_path, spend_path]


SPEND_COLUMNS = ["agent", "game_status", "calls", "tokens_in", "tokens_out", "usd"]


def spend_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    """Calls, tokens and cost per agent and game status (finished, failed, interrupted, ...)
    of what the run played, priced as its stored config priced the agents (usd empty where
    no price was set)."""
    from turinglab.agents.pricing import configured_prices

    info = store.find_run(run_id)
    agents = (info.config or {}).get("agents", {}) if info else {}
    prices = configured_prices({n: _Priced(a) for n, a in agents.items()})
    rows = []
    for use in store.token_use(run_id):
        price = prices.get(use["agent"])
        cost = price.of(use["tokens_in"], use["tokens_out"]) if price else None
        status = use.pop("status")
        rows.append({**use, "game_status": status, "usd": cost})
    return rows


class _Priced:
    """A stored agent config (a dict) read as configured_prices reads a config model."""

    def __init__(self, data: dict[str, Any]) -> None:
        self.price_in_usd_per_mtok = data.get("price_in_usd_per_mtok")
        self.price_out_usd_per_mtok = data.get("price_out_usd_per_mtok")


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as f:
        for rec in records:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")

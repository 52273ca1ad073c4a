"""Calibration of AI-judge inference on real text: no-signal datasets built from real human
chats (chitchat-dataset, 12 turns each; whole conversations relabelled "machine", from two
made-up agents) go through the shipped pipeline (`run_judges`: MiniLM embeddings, grouped
10-fold CV × 3 seeds, permutation inference) and we count how often the 95% interval of each
AI judge excludes chance, with its Clopper–Pearson interval — beside the cluster bootstrap of
the same predictions (what `itt score` reported before). Designs: 20/40/60 conversations,
balanced (half machine) and unbalanced (a third human). With-signal controls give the power:
machine sides lower-cased without punctuation; an assistant-like phrase on 30% of machine
messages.

    PYTHONPATH=src python benchmarks/itt_calibration.py --out benchmarks/itt_calibration.json \
        --datasets 200 --controls 40 --controls-every 4 --extrapolation-every 20 [--until HH:MM]

The pool's embeddings (7,200 messages) are computed once and cached on disk (--cache); a
control's changed messages are embedded when a dataset first uses them. Every dataset then
reuses them, so the run is CV and permutations only. One dataset of every size and design per
round (results written after each), so a run stopped by --until is stopped evenly."""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from turinglab.itt.dataset import Response
from turinglab.itt.embeddings import embed, remember
from turinglab.itt.human_sources import chitchat_conversations
from turinglab.itt.pipeline import run_judges

POOL, TURNS, POOL_SEED = 600, 12, 2026
PHRASE = " Let me know if there is anything else I can help you with."
FAMILIES = ("svm-minilm-sentence", "svm-minilm-side")


def lower(text: str) -> str:
    return re.sub(r"[^\w\s]", "", text.lower()).strip() or "…"


def pool(cache: Path) -> dict[str, list[Response]]:
    """The chats by conversation id, their embeddings remembered (cached on disk)."""
    rows = chitchat_conversations(POOL, TURNS, POOL_SEED)
    cache.mkdir(parents=True, exist_ok=True)
    texts = [r.text for r in rows]
    path = cache / f"chitchat-{POOL}-{TURNS}-{POOL_SEED}-plain.npy"
    if path.exists():
        vectors = np.load(path)
    else:
        vectors = embed(texts).vectors
        np.save(path, vectors)
    remember(texts, vectors)
    KNOWN.update(texts)
    by_conv: dict[str, list[Response]] = {}
    for r in rows:
        by_conv.setdefault(r.conversation or "", []).append(r)
    return by_conv


KNOWN: set[str] = set()


def embed_missing(rows: list[Response]) -> None:
    """A control's changed texts embedded when first seen (only the texts datasets use)."""
    missing = sorted({r.text for r in rows} - KNOWN)
    if missing:
        remember(missing, embed(missing).vectors)
        KNOWN.update(missing)


def dataset(
    chats: dict[str, list[Response]], rng: np.random.Generator, size: int, design: str, signal: str
) -> list[Response]:
    """`size` chats; a share of them relabelled machine (both sides, agents a and b)."""
    ids = rng.choice(sorted(chats), size=size, replace=False)
    humans = size // 2 if design == "balanced" else size // 3
    out = []
    for k, cid in enumerate(ids):
        machine = k >= humans
        agent = "agent-a" if k % 2 else "agent-b"
        for r in chats[str(cid)]:
            if not machine:
                out.append(r)
                continue
            text = r.text
            if signal == "lower":
                text = lower(text)
            elif signal == "phrase" and rng.random() < 0.3:
                text += PHRASE
            out.append(r.model_copy(update={"source": "machine", "agent": agent, "text": text}))
    return out


def excludes(ci: list[float] | None, null: float | None = 0.5) -> bool:
    return bool(ci is not None and null is not None and (ci[0] > null or ci[1] < null))


RATES = {"p_H_given_H": "ci_H_given_H", "p_M_given_M": "ci_M_given_M"}


def clopper_pearson(k: int, n: int, level: float = 0.95) -> list[float]:
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return [round(lo, 4), round(hi, 4)]


def judge_one(
    rows: list[Response], permutations: int, extrapolation: bool, seed: int = 0
) -> dict[str, Any]:
    """One dataset through the shipped pipeline. Each dataset gets its own permutation seed:
    the Clopper–Pearson interval counts independent trials, and with one seed every dataset
    of a size would be tested against the same 199 index permutations."""
    result = run_judges(
        rows,
        lengths=(3, 6, 9, 12),
        extrapolation=extrapolation,
        permutations=permutations,
        permutation_seed=seed,
    )
    got: dict[str, Any] = {}
    for family in FAMILIES:
        score = result.summary["scores"][family]
        got[family] = {
            "estimate": score["detectability"],
            "excluded": excludes(score["detectability_ci"]),
            "rejected": score["p_value"] is not None and score["p_value"] <= 0.05,
            "old_excluded": excludes(score["cluster_bootstrap_ci"]),
            "inconclusive": score["inference"]["note"] is not None,
        }
        # per-class rates: no signal means the rate label-free prediction gives (the mean of
        # the permutation null), not ½; the old interval is the cluster bootstrap's
        for rate, ci_key in RATES.items():
            r = score["inference"]["rates"][rate]
            got[f"{family} {rate}"] = {
                "estimate": r["rate"],
                "null_value": r["label_free"],
                "excluded": excludes(r["ci"], r["label_free"]),
                "rejected": r["p_value"] is not None and r["p_value"] <= 0.05,
                "old_excluded": excludes(
                    score["cluster_bootstrap_rates_ci"][ci_key], r["label_free"]
                ),
                "inconclusive": r["note"] is not None,
            }
    for mode, per_model in result.extrapolation.items():
        for model, s in per_model.items():
            got[f"extrapolation {mode}:{model}"] = {
                "estimate": s["detectability"],
                "excluded": excludes(s["detectability_ci"]),
                "rejected": s["p_value"] is not None and s["p_value"] <= 0.05,
                "old_excluded": excludes(s["cluster_bootstrap_ci"]),
                "inconclusive": s["inference"]["note"] is not None,
            }
    return got


def rate(outcomes: list[dict[str, Any]], key: str) -> dict[str, Any]:
    k, n = int(sum(bool(o[key]) for o in outcomes)), len(outcomes)
    return {"excluded": k, "datasets": n, "rate": round(k / n, 4), "ci": clopper_pearson(k, n)}


def summarise(outcomes: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    out = {}
    for judge, got in sorted(outcomes.items()):
        estimates = [o["estimate"] for o in got if o["estimate"] is not None]
        out[judge] = {
            "permutation_interval": rate(got, "excluded"),
            # the interval excludes ½ exactly when the test rejects: counted, not assumed
            "interval_and_test_disagree": int(sum(o["excluded"] != o["rejected"] for o in got)),
            "cluster_bootstrap": rate(got, "old_excluded"),
            "mean_estimate": round(float(np.mean(estimates)), 4) if estimates else None,
            "inconclusive": int(sum(o["inconclusive"] for o in got)),
        }
        nulls = [o["null_value"] for o in got if o.get("null_value") is not None]
        if nulls:  # a per-class rate's label-free value, averaged over datasets
            out[judge]["mean_null_value"] = round(float(np.mean(nulls)), 4)
    return out


def _added(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Two tallies of one statistic (`rate`'s, a judge's or a control's summary) as one:
    counts add, means are weighted by their datasets."""
    if "excluded" in new:
        k, n = old["excluded"] + new["excluded"], old["datasets"] + new["datasets"]
        return {"excluded": k, "datasets": n, "rate": round(k / n, 4), "ci": clopper_pearson(k, n)}
    weight = {"old": 0, "new": 0}
    for key, side in (("old", old), ("new", new)):
        tally = side.get("permutation_interval") or side.get("power") or {}
        weight[key] = tally.get("datasets", 0)
    out: dict[str, Any] = {}
    for key in sorted({*old, *new}, key=[*old, *new].index):
        a, b = old.get(key), new.get(key)
        if a is None or b is None:
            out[key] = b if a is None else a
        elif isinstance(a, dict):
            out[key] = _added(a, b)
        elif key.startswith("mean"):
            total = weight["old"] + weight["new"]
            out[key] = round((a * weight["old"] + b * weight["new"]) / total, 4)
        else:
            out[key] = a + b
    return out


def merged_results(old: Any, new: Any) -> Any:
    """The committed results of earlier rounds with this run's (--resume): tallies added
    statistic by statistic; a statistic only one of them has (the per-class rates, first
    measured in a resumed run) is kept as it is, with its own dataset count."""
    if old is None or new is None:
        return new if old is None else old
    if "permutation_interval" in new or "power" in new:
        return _added(old, new)
    return {k: merged_results(old.get(k), new.get(k)) for k in sorted({*old, *new}, key=_order)}


def _order(key: str) -> tuple[int, float, str]:
    try:
        return (0, float(key), "")
    except ValueError:
        return (1, 0.0, key)


def replay(
    rounds: int,
    args: argparse.Namespace,
    chats: dict[str, list[Response]],
    rngs: dict,
    signal_rngs: dict,
) -> int:
    """Draw (without judging) the datasets of the rounds a resumed run already has, so each
    cell's generator continues where it stopped; returns the controls done."""
    done_controls = 0
    for i in range(rounds):
        for size, design in CELLS:
            if size in args.sizes and i < args.datasets:
                dataset(chats, rngs[(size, design)], size, design, "none")
        for signal, size in CONTROLS:
            if not (i % args.controls_every or done_controls >= args.controls):
                dataset(chats, signal_rngs[(signal, size)], size, "balanced", signal)
        if i % args.controls_every == 0 and done_controls < args.controls:
            done_controls += 1
    return done_controls


PER_CLASS_NOTE = (
    "'<judge> p_H_given_H' and '<judge> p_M_given_M': the per-class rates' permutation "
    "intervals against the rate label-free prediction gives (the mean of the same rate over "
    "the permutation null), not against 0.5; 'cluster_bootstrap' there is the old interval "
    "against the same value. Measured from the first resumed run on, so their dataset "
    "counts can be smaller than detectability's."
)
CELLS = [(size, design) for size in (20, 40, 60) for design in ("balanced", "unbalanced")]
CONTROLS = (("lower", 20), ("phrase", 40))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--datasets", type=int, default=100, help="per size and design")
    parser.add_argument("--controls", type=int, default=40, help="datasets per signal control")
    parser.add_argument("--controls-every", type=int, default=1, help="one of each per N rounds")
    parser.add_argument("--permutations", type=int, default=199)
    parser.add_argument("--extrapolation-every", type=int, default=10, help="0: none")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 60])
    parser.add_argument(
        "--until", default=None, help="UTC time HH:MM after which no new round starts"
    )
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/turinglab/itt")
    parser.add_argument(
        "--resume",
        action="store_true",
        help="add rounds to the results already in --out (same sizes and --controls-every)",
    )
    args = parser.parse_args()
    previous = json.loads(args.out.read_text()) if args.resume and args.out.exists() else None
    if previous is not None:
        for key in ("sizes", "controls_every", "permutations"):
            if previous["settings"][key] != str(getattr(args, key)):
                parser.error(
                    f"--resume: --{key} differs from the results' {previous['settings'][key]}"
                )
    start = time.perf_counter()
    chats = pool(args.cache)
    pool_seconds = time.perf_counter() - start
    null: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {}
    signal_got: dict[str, dict[str, list[dict[str, Any]]]] = {}
    cells: dict[str, float] = {}
    rounds = {"done": 0, "stopped": "all datasets done"}

    cells_total: dict[str, float] = {}

    def write() -> None:
        """Everything so far (after each round: a run cut short still leaves its results,
        every cell with the same number of datasets)."""
        per_size = {}
        for size, designs in null.items():
            merged: dict[str, list[dict[str, Any]]] = {}
            for cell in designs.values():
                for judge, got in cell.items():
                    merged.setdefault(judge, []).extend(got)
            per_size[size] = {
                "both designs": summarise(merged),
                **{d: summarise(c) for d, c in designs.items()},
            }
        controls = {
            key: {j: {"power": rate(o, "excluded"),
                      "cluster_bootstrap_power": rate(o, "old_excluded"),
                      "mean_estimate": round(float(np.mean([x["estimate"] for x in o])), 4)}
                  for j, o in got.items()}
            for key, got in signal_got.items()
        }  # fmt: skip
        command = " ".join(["PYTHONPATH=src python", *sys.argv])
        commands = (
            [*previous.get("commands", [previous["command"]]), command] if previous else [command]
        )
        if previous is not None:
            per_size = merged_results(previous["no_signal"], per_size)
            controls = merged_results(previous["with_signal"], controls)
            for key, seconds in previous["cell_seconds"].items():
                cells_total[key] = seconds
        out = {
            "command": command,
            "commands": commands,
            "nominal": 0.05,
            "pool": f"chitchat-dataset: {POOL} chats of {TURNS} turns (seed {POOL_SEED})",
            "settings": {k: str(v) for k, v in vars(args).items() if k not in ("out", "cache")},
            "rounds": rounds,
            "embedding_seconds_or_cache": round(pool_seconds, 1),
            "cell_seconds": {
                k: round(cells_total.get(k, 0.0) + cells.get(k, 0.0), 1)
                for k in sorted({*cells_total, *cells}, key=[*cells_total, *cells].index)
            },
            "no_signal": per_size,
            "with_signal": controls,
            "seconds": round(
                time.perf_counter() - start + (previous["seconds"] if previous else 0.0), 1
            ),
            "per_class": PER_CLASS_NOTE,
        }
        args.out.write_text(json.dumps(out, indent=2) + "\n")

    # One dataset of every cell per round, each cell drawing from its own generator (the
    # datasets are those a cell-by-cell run would draw), so a run stopped by --until is
    # stopped evenly.
    rngs = {(size, design): np.random.default_rng([size, len(design)]) for size, design in CELLS}
    signal_rngs = {c: np.random.default_rng([c[1], 7]) for c in CONTROLS}
    first = previous["rounds"]["done"] if previous else 0
    done_controls = replay(first, args, chats, rngs, signal_rngs) if first else 0
    rounds["done"] = first
    for i in range(first, max(args.datasets, args.controls * args.controls_every)):
        if args.until and time.strftime("%H:%M", time.gmtime()) >= args.until:
            rounds["stopped"] = f"--until {args.until} reached"
            break
        for size, design in CELLS:
            if size not in args.sizes or i >= args.datasets:
                continue
            t = time.perf_counter()
            rows = dataset(chats, rngs[(size, design)], size, design, "none")
            extra = args.extrapolation_every > 0 and i % args.extrapolation_every == 0
            cell = null.setdefault(str(size), {}).setdefault(design, {})
            for judge, o in judge_one(rows, args.permutations, extra, seed=i).items():
                cell.setdefault(judge, []).append(o)
            key = f"{size} {design}"
            cells[key] = cells.get(key, 0.0) + time.perf_counter() - t
        for signal, size in CONTROLS:
            if i % args.controls_every or done_controls >= args.controls:
                continue
            t = time.perf_counter()
            rows = dataset(chats, signal_rngs[(signal, size)], size, "balanced", signal)
            embed_missing(rows)
            got = signal_got.setdefault(f"{signal}, {size} conversations", {})
            for judge, o in judge_one(rows, args.permutations, False, seed=i).items():
                got.setdefault(judge, []).append(o)
            key = f"{signal} {size}"
            cells[key] = cells.get(key, 0.0) + time.perf_counter() - t
        if i % args.controls_every == 0 and done_controls < args.controls:
            done_controls += 1
        rounds["done"] = i + 1
        print(i + 1, {k: round(v) for k, v in cells.items()}, flush=True)
        write()
    write()


if __name__ == "__main__":
    main()

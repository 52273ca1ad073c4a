"""Calibration of AI-judge inference on real text: no-signal datasets built from real human
chats (chitchat-dataset, 12 turns each; whole conversations relabelled "machine", from two
made-up agents) go through the shipped pipeline (`run_judges`: MiniLM embeddings, grouped
10-fold CV × 3 seeds, permutation inference) and we count how often the 95% interval of each
AI judge excludes chance, with its Clopper–Pearson interval — beside the cluster bootstrap of
the same predictions (what `itt score` reported before). Designs: 20/40/60 conversations,
balanced (half machine) and unbalanced (a third human). With-signal controls give the power:
machine sides lower-cased without punctuation; an assistant-like phrase on 30% of machine
messages.

    PYTHONPATH=src python benchmarks/itt_calibration.py --out benchmarks/itt_calibration.json

The pool's embeddings (three variants of 7,200 messages) are computed once and cached on disk
(--cache); every dataset then reuses them, so the run is CV and permutations only."""

from __future__ import annotations

import argparse
import json
import re
import time
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from turinglab.itt.dataset import Response
from turinglab.itt.embeddings import embed, remember
from turinglab.itt.human_sources import chitchat_conversations
from turinglab.itt.pipeline import run_judges

COMMAND = (
    "PYTHONPATH=src python benchmarks/itt_calibration.py --out benchmarks/itt_calibration.json"
)
POOL, TURNS, POOL_SEED = 600, 12, 2026
PHRASE = " Let me know if there is anything else I can help you with."
FAMILIES = ("svm-minilm-sentence", "svm-minilm-side")


def lower(text: str) -> str:
    return re.sub(r"[^\w\s]", "", text.lower()).strip() or "…"


def variants(text: str) -> dict[str, str]:
    return {"plain": text, "lower": lower(text), "phrase": text + PHRASE}


def pool(cache: Path) -> dict[str, list[Response]]:
    """The chats by conversation id, every text variant's embedding remembered."""
    rows = chitchat_conversations(POOL, TURNS, POOL_SEED)
    cache.mkdir(parents=True, exist_ok=True)
    for name in ("plain", "lower", "phrase"):
        texts = [variants(r.text)[name] for r in rows]
        path = cache / f"chitchat-{POOL}-{TURNS}-{POOL_SEED}-{name}.npy"
        if path.exists():
            vectors = np.load(path)
        else:
            vectors = embed(texts).vectors
            np.save(path, vectors)
        remember(texts, vectors)
    by_conv: dict[str, list[Response]] = {}
    for r in rows:
        by_conv.setdefault(r.conversation or "", []).append(r)
    return by_conv


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


def excludes(ci: list[float] | None) -> bool:
    return bool(ci is not None and (ci[0] > 0.5 or ci[1] < 0.5))


def clopper_pearson(k: int, n: int, level: float = 0.95) -> list[float]:
    a = (1 - level) / 2
    lo = 0.0 if k == 0 else float(stats.beta.ppf(a, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(1 - a, k + 1, n - k))
    return [round(lo, 4), round(hi, 4)]


def judge_one(rows: list[Response], permutations: int, extrapolation: bool) -> dict[str, Any]:
    result = run_judges(
        rows, lengths=(3, 6, 9, 12), extrapolation=extrapolation, permutations=permutations
    )
    got: dict[str, Any] = {}
    for family in FAMILIES:
        score = result.summary["scores"][family]
        got[family] = {
            "estimate": score["detectability"],
            "excluded": excludes(score["detectability_ci"]),
            "old_excluded": excludes(score["cluster_bootstrap_ci"]),
            "inconclusive": score["inference"]["note"] is not None,
        }
    for mode, per_model in result.extrapolation.items():
        for model, s in per_model.items():
            got[f"extrapolation {mode}:{model}"] = {
                "estimate": s["detectability"],
                "excluded": excludes(s["detectability_ci"]),
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
            "cluster_bootstrap": rate(got, "old_excluded"),
            "mean_estimate": round(float(np.mean(estimates)), 4) if estimates else None,
            "inconclusive": int(sum(o["inconclusive"] for o in got)),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--datasets", type=int, default=100, help="per size and design")
    parser.add_argument("--controls", type=int, default=40, help="datasets per signal control")
    parser.add_argument("--permutations", type=int, default=199)
    parser.add_argument("--extrapolation-every", type=int, default=10, help="0: none")
    parser.add_argument("--sizes", type=int, nargs="+", default=[20, 40, 60])
    parser.add_argument("--cache", type=Path, default=Path.home() / ".cache/turinglab/itt")
    args = parser.parse_args()
    start = time.perf_counter()
    chats = pool(args.cache)
    pool_seconds = time.perf_counter() - start
    null: dict[str, dict[str, dict[str, list[dict[str, Any]]]]] = {}
    controls: dict[str, Any] = {}
    cells: dict[str, float] = {}

    def write() -> None:
        """Everything so far (after each cell: a run cut short still leaves its results)."""
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
        out = {
            "command": COMMAND,
            "nominal": 0.05,
            "pool": f"chitchat-dataset: {POOL} chats of {TURNS} turns (seed {POOL_SEED})",
            "settings": {k: str(v) for k, v in vars(args).items() if k not in ("out", "cache")},
            "embedding_seconds_or_cache": round(pool_seconds, 1),
            "cell_seconds": cells,
            "no_signal": per_size,
            "with_signal": controls,
            "seconds": round(time.perf_counter() - start, 1),
        }
        args.out.write_text(json.dumps(out, indent=2) + "\n")

    for size in args.sizes:
        for design in ("balanced", "unbalanced"):
            rng = np.random.default_rng([size, len(design)])
            cell = null.setdefault(str(size), {}).setdefault(design, {})
            t = time.perf_counter()
            for i in range(args.datasets):
                rows = dataset(chats, rng, size, design, "none")
                extra = args.extrapolation_every > 0 and i % args.extrapolation_every == 0
                for judge, o in judge_one(rows, args.permutations, extra).items():
                    cell.setdefault(judge, []).append(o)
            cells[f"{size} {design}"] = round(time.perf_counter() - t, 1)
            print(size, design, cells[f"{size} {design}"], "s", flush=True)
            write()
    for signal, size in (("lower", 20), ("phrase", 40)):
        rng = np.random.default_rng([size, 7])
        got: dict[str, list[dict[str, Any]]] = {}
        t = time.perf_counter()
        for _ in range(args.controls):
            rows = dataset(chats, rng, size, "balanced", signal)
            for judge, o in judge_one(rows, args.permutations, False).items():
                got.setdefault(judge, []).append(o)
        controls[f"{signal}, {size} conversations"] = {
            j: {"power": rate(o, "excluded"), "cluster_bootstrap_power": rate(o, "old_excluded"),
                "mean_estimate": round(float(np.mean([x["estimate"] for x in o])), 4)}
            for j, o in got.items()
        }  # fmt: skip
        cells[f"{signal} {size}"] = round(time.perf_counter() - t, 1)
        print(signal, cells[f"{signal} {size}"], "s", flush=True)
        write()


if __name__ == "__main__":
    main()

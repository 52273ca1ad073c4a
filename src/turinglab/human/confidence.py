"""Verdict confidence: distributions by verdict and witness, and calibration per witness.

A verdict is *correct* when judged_human == (witness_type == "human"). In a three-party game
both rows carry the same verdict, so an AI witness's rows describe every game it played.

Calibration maps the 0–100 slider ("total guess" … "totally sure") of a two-alternative
verdict to an implied probability of being right, p = 0.5 + 0.5 · confidence/100 (a guess is
right half the time). With that mapping:
  * brier          = mean((p − correct)²); 0 is perfect, 0.25 is an always-guessing judge;
  * ece            = Σ_bins (n_b / N) · |accuracy_b − mean p_b| (expected calibration error);
  * overconfidence = mean p − accuracy (> 0: more confident than right).
Rows without a confidence value are left out of everything here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from turinglab.analysis import stats

DEFAULT_BINS: tuple[float, ...] = (0, 20, 40, 60, 80, 100)


def with_correctness(df: pd.DataFrame) -> pd.DataFrame:
    """Rows with a confidence value, plus `correct` and the implied probability `p_implied`."""
    rated = df[df["confidence"].notna()].copy()
    rated["correct"] = rated["judged_human"] == (rated["witness_type"] == "human")
    rated["p_implied"] = 0.5 + 0.5 * rated["confidence"] / 100.0
    return rated


def confidence_summary(df: pd.DataFrame) -> pd.DataFrame:
    """n, mean, sd, quartiles of confidence per (study, witness, verdict)."""
    rated = with_correctness(df)
    rated["verdict"] = np.where(rated["judged_human"], "judged human", "judged AI")
    grouped = rated.groupby(["study", "witness", "verdict"])["confidence"]
    table = grouped.agg(
        n="count",
        mean="mean",
        sd="std",
        q25=lambda s: s.quantile(0.25),
        median="median",
        q75=lambda s: s.quantile(0.75),
    )
    return table.reset_index()


def calibration_bins(
    df: pd.DataFrame, *, bins: Sequence[float] = DEFAULT_BINS, level: float = 0.95
) -> pd.DataFrame:
    """Accuracy per confidence bin and witness, with exact (Clopper–Pearson) CIs.

    Bins are [b0, b1), …, [b_{k-1}, b_k] — the last one includes 100."""
    rated = with_correctness(df)
    edges = list(bins)
    labels = [f"{edges[i]:g}–{edges[i + 1]:g}" for i in range(len(edges) - 1)]
    rated["bin"] = pd.cut(rated["confidence"], edges, labels=labels, right=False)
    # right=False leaves the top edge out; put a confidence of exactly b_k in the last bin
    rated.loc[rated["confidence"] == edges[-1], "bin"] = labels[-1]
    records = []
    for (study, witness), rows in rated.groupby(["study", "witness"], sort=True):
        for label in labels:
            in_bin = rows[rows["bin"] == label]
            n, k = len(in_bin), int(in_bin["correct"].sum())
            low, high = stats.binomial_ci(k, n, level=level) if n else (np.nan, np.nan)
            records.append(
                {
                    "study": study,
                    "witness": witness,
                    "bin": label,
                    "n": n,
                    "correct": k,
                    "accuracy": k / n if n else np.nan,
                    "ci_low": low,
                    "ci_high": high,
                    "mean_confidence": in_bin["confidence"].mean() if n else np.nan,
                    "mean_p_implied": in_bin["p_implied"].mean() if n else np.nan,
                }
            )
    return pd.DataFrame.from_records(records)


@dataclass(frozen=True)
class Calibration:
    study: str
    witness: str
    n: int
    accuracy: float
    mean_confidence: float
    brier: float
    ece: float
    overconfidence: float


def calibration_summary(
    df: pd.DataFrame, *, bins: Sequence[float] = DEFAULT_BINS
) -> list[Calibration]:
    """Brier score, ECE and overconfidence per (study, witness); see the module docstring."""
    rated = with_correctness(df)
    binned = calibration_bins(df, bins=bins)
    results = []
    for (study, witness), rows in rated.groupby(["study", "witness"], sort=True):
        correct = rows["correct"].to_numpy(dtype=float)
        implied = rows["p_implied"].to_numpy(dtype=float)
        cells = binned[(binned["study"] == study) & (binned["witness"] == witness)]
        cells = cells[cells["n"] > 0]
        ece = float(
            (cells["n"] * (cells["accuracy"] - cells["mean_p_implied"]).abs()).sum() / len(rows)
        )
        results.append(
            Calibration(
                study=str(study),
                witness=str(witness),
                n=len(rows),
                accuracy=float(correct.mean()),
                mean_confidence=float(rows["confidence"].mean()),
                brier=float(np.mean((implied - correct) ** 2)),
                ece=ece,
                overconfidence=float(implied.mean() - correct.mean()),
            )
        )
    return results

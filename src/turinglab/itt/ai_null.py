"""A statistic of the AI-judge pipeline against its permutation null (docs/itt.md, "AI-judge
inference"): the two-sided permutation p value and the interval that inverts it under a shift.

What the null value is depends on the statistic. Detectability has one that does not depend on
the classifier: ½ (a judge without information is at chance). A per-class rate — p(H|H),
p(M|M), or one of Figure S4E's cells — has none: with no signal a classifier's p(H|H) is
whatever its threshold and the class balance make it (a judge that says "H" more often has a
high p(H|H) and a low p(M|M)). Its null value is therefore what *label-free prediction* gives:
the mean of the same rate over the permutation null, where the labels carry no information
about the text. So a per-class rate is tested against the rate the same pipeline reaches on
relabelled data, and its interval is that of the procedure's expected cross-validated rate:
estimate + (label-free value − the null's quantiles).

Either way the interval excludes the null value exactly when the test rejects (the bounds are
order statistics of the same null the p value counts)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

LEVEL = 0.95
MIN_LABELLINGS = 40  # a two-sided 5% test needs 2/N ≤ 0.05


def inverted(
    values: np.ndarray, distinct: float, centre: float | None, level: float = LEVEL
) -> dict[str, Any]:
    """Observed statistic (values[0]) against its null (values[1:]): estimate, interval, p,
    the null value (`centre`, or the null's mean when None), its SD, and a note when the
    design or the permutation count allows no 5% test."""
    observed, null = float(values[0]), np.asarray(values[1:], dtype=float)
    null = null[~np.isnan(null)]
    b = len(null)
    if centre is None:
        centre = float(np.mean(null)) if b else math.nan
    out: dict[str, Any] = {
        "estimate": None if math.isnan(observed) else round(observed, 4),
        "ci": None,
        "p_value": None,
        "null_value": None if math.isnan(centre) else round(centre, 4),
        "null_median": None if not b else round(float(np.median(null)), 4),
        "null_sd": None if b < 2 else round(float(np.std(null, ddof=1)), 4),
        "permutations": b,
        "labellings": float(f"{distinct:.3g}"),
        "note": None,
    }
    if math.isnan(observed) or b < 19:
        out["note"] = "no estimate or too few defined permutations"
        return out
    upper = (1 + int((null >= observed - 1e-12).sum())) / (b + 1)
    lower = (1 + int((null <= observed + 1e-12).sum())) / (b + 1)
    out["p_value"] = round(min(1.0, 2 * min(upper, lower)), 4)
    if distinct < MIN_LABELLINGS:
        out["note"] = (
            f"too small or too unbalanced to say anything: the design allows only "
            f"{distinct:.0f} distinct labellings (a 5% test needs {MIN_LABELLINGS})"
        )
        return out
    # order statistics consistent with the p value: excludes the null value iff p ≤ 1 − level.
    # With fewer than 2/(1 − level) − 1 permutations no p reaches 1 − level, so no interval can
    # exclude anything (clamping m to 0 there excluded ½ at p = 0.1 with 19 permutations).
    m = math.floor((1 - level) / 2 * (b + 1)) - 1
    if m < 0:
        out["note"] = (
            f"{b} permutations cannot give a {level:.0%} interval "
            f"(at least {math.ceil(2 / (1 - level)) - 1} are needed)"
        )
        return out
    s = np.sort(null)
    lo = observed - (s[b - 1 - m] - centre)
    hi = observed - (s[m] - centre)
    # strictly beyond the order statistic is needed to reject: an exact tie stays inside
    out["ci"] = [round(float(max(0.0, lo)), 4), round(float(min(1.0, hi)), 4)]
    return out


def rate_verdict(values: np.ndarray, distinct: float, level: float = LEVEL) -> dict[str, Any]:
    """A per-class rate against the rate label-free prediction gives (the null's mean)."""
    got = inverted(values, distinct, None, level)
    return {
        "rate": got["estimate"],
        "ci": got["ci"],
        "p_value": got["p_value"],
        "label_free": got["null_value"],
        "null_sd": got["null_sd"],
        "permutations": got["permutations"],
        "labellings": got["labellings"],
        "note": got["note"],
    }


def per_class(cells: np.ndarray) -> dict[str, np.ndarray]:
    """p(H|H) and p(M|M) of each row of cells (hh, hm, mh, mm); NaN where an arm is empty."""
    hh, hm, mh, mm = np.asarray(cells, dtype=float).T
    with np.errstate(invalid="ignore", divide="ignore"):
        return {"p_H_given_H": hh / (hh + hm), "p_M_given_M": mm / (mh + mm)}


def rate_verdicts(cells: np.ndarray, distinct: float) -> dict[str, dict[str, Any]]:
    """Each per-class rate of (B + 1) × 4 cells against its label-free value."""
    return {k: rate_verdict(v, distinct) for k, v in per_class(cells).items()}

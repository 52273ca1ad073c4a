"""An AI judge's marks in `itt score` and the report — intervals, SDs, p values of
detectability, of its per-class rates p(H|H) and p(M|M), per model, per length and per
conversation type (Figure S4E) — from the pipeline's permutation inference (ai_inference.py,
stored in study.json), never from the cluster bootstrap of fixed cross-validated predictions,
which ignores the classifier's training variance and was too narrow. The bootstrap's figures
are kept beside (`cluster_bootstrap_*`) for comparison; where there is no inference, there is
no interval."""

from __future__ import annotations

from typing import Any

SIGNIFICANCE = 0.05  # the paper's level for its asterisks (Figure S3C: p < 0.05)
NO_INFERENCE = "no permutation inference (judged without it): no honest interval"
NO_CUT = "no permutation inference for this cut"
NO_RATES = "judged before per-class inference: no honest per-class interval"
# a per-class rate's interval, and its complement's (p(M|H) = 1 − p(H|H))
RATE_CI = {
    "p_H_given_H": ("ci_H_given_H", "ci_M_given_H"),
    "p_M_given_M": ("ci_M_given_M", "ci_H_given_M"),
}


def calibrated_rates(summary: dict[str, Any], rates: dict[str, Any] | None) -> None:
    """p(H|H) and p(M|M) get their permutation intervals (against the rate label-free
    prediction gives; ai_null.py) and the null's SD; their complements the mirrored
    interval; `rates_inference` keeps the label-free values and p values."""
    if "cluster_bootstrap_rates_ci" not in summary:
        summary["cluster_bootstrap_rates_ci"] = {
            k: summary.get(k) for keys in RATE_CI.values() for k in keys
        }
    sd = dict(summary.get("sd") or {})
    for rate, (ci_key, complement) in RATE_CI.items():
        got = (rates or {}).get(rate)
        ci = None if got is None else got.get("ci")
        summary[ci_key] = ci
        summary[complement] = None if ci is None else [round(1 - ci[1], 4), round(1 - ci[0], 4)]
        if rate in sd:
            sd[rate] = None if got is None else got.get("null_sd")
    if "sd" in summary:
        summary["sd"] = sd
    summary["rates_inference"] = rates


def calibrated_marks(
    summary: dict[str, Any], got: dict[str, Any] | None, missing: str = NO_INFERENCE
) -> None:
    """An AI judge's Figure S3C marks from its permutation inference: interval, SD (the
    permutation null's, the spread of the estimate with no signal) and p of detectability
    and of each per-class rate; none at all where it has none."""
    if "cluster_bootstrap_ci" not in summary:
        summary["cluster_bootstrap_ci"] = summary["detectability_ci"]
        summary["cluster_bootstrap_sd"] = summary["sd"]["detectability"]
    if got is None:
        summary["detectability_ci"] = summary["p_value"] = None
        summary["sd"] = {**summary["sd"], "detectability": None}
        summary["p_vs_chance"] = summary["significant"] = None
        summary["note"] = missing
        calibrated_rates(summary, None)
        return
    p = got.get("p_value")
    summary["detectability_ci"] = got.get("detectability_ci")
    summary["sd"] = {**summary["sd"], "detectability": got.get("null_sd")}
    summary["p_value"] = summary["p_vs_chance"] = p
    summary["significant"] = None if p is None else p < SIGNIFICANCE
    summary["note"] = got.get("note")
    calibrated_rates(summary, got.get("rates"))
    if got.get("rates") is None:
        summary["rates_note"] = NO_RATES


def calibrate_ai(table: dict[str, Any], inference: dict[str, Any]) -> None:
    """AI-judge families' intervals replaced by the pipeline's permutation-calibrated ones;
    the cluster bootstrap of fixed predictions is kept beside as `cluster_bootstrap_ci`, or
    flagged where nothing replaces it."""
    for family, s in table.items():
        if family == "human judges":
            continue
        s["cluster_bootstrap_ci"] = s["detectability_ci"]
        got = inference.get(family)
        if got is None:
            s["detectability_ci"] = None
            s["note"] = NO_INFERENCE
            continue
        s["detectability_ci"] = got["detectability_ci"]
        s["p_value"] = got["p_value"]
        s["note"] = got["note"]


def inferred_types(got: dict[str, Any] | None) -> dict[str, dict[str, Any]] | None:
    """A family's Figure S4E cells from its inference, shaped as the human judges' cells
    (rate, speakers judged, conversations, SD, interval) plus p and the label-free rate."""
    types = (got or {}).get("conversation_types")
    if not types:
        return None
    return {
        name: {
            "n": cell["n"],
            "rate": cell["rate"],
            "units": cell["units"],
            "judges": 1,
            "ci": cell["ci"],
            "sd": cell["null_sd"],
            "p_value": cell["p_value"],
            "label_free": cell["label_free"],
            "note": cell["note"],
        }
        for name, cell in types.items()
    }


def calibrate_tables(out: dict[str, Any], inference: dict[str, Any]) -> None:
    """Permutation marks for every AI judge family's row, per judge, per model, per length,
    per task (an AI family is trained on one task: its task is the family) and per
    conversation type; cuts the inference does not cover lose their intervals."""
    for family, s in out["per_judge_family"].items():
        if family != "human judges":
            s["cluster_bootstrap_sd"] = s["sd"]["detectability"]
    calibrate_ai(out["per_judge_family"], inference)
    for family, s in out["per_judge_family"].items():
        if family != "human judges":
            calibrated_marks(s, inference.get(family))
    for family, lengths in out["per_judge_family_and_length"].items():
        if family != "human judges":
            per_length = (inference.get(family) or {}).get("per_length") or {}
            for length, cut in lengths.items():
                calibrated_marks(cut, per_length.get(length), NO_CUT)
    for family, tasks in out["per_judge_family_and_task"].items():
        if family != "human judges":
            for cut in tasks.values():
                whole = len(tasks) == 1 and family in inference
                calibrated_marks(cut, inference.get(family) if whole else None, NO_CUT)
    for family, tasks in out["per_judge_model"].items():
        if family == "human judges":
            continue
        got = inference.get(family) or {}
        per_model = got.get("per_model")
        for models in tasks.values():
            for model, s in models.items():
                if per_model is None and len(models) == 1:
                    calibrated_marks(s, got or None)  # the family's one model is the family
                else:
                    calibrated_marks(s, (per_model or {}).get(model))
    split = out.setdefault("conversation_types", {})
    for family in sorted(set(out["per_judge_family"]) - {"human judges"}):
        types = inferred_types(inference.get(family))
        if types is not None:
            split[family] = types
        elif family in split:
            for cell in split[family].values():
                cell.update(ci=None, sd=None, note=NO_INFERENCE)

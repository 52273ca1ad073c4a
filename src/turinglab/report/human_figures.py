"""Figures of the human-judged study report: matplotlib (Agg), plain data in, a Figure out.

Each function takes names and numbers (no study table, no analysis objects), so the report
module decides what to show and these only decide how. Save with `figures.save_figure` and
inline with `figures.figure_svg`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")  # reports are built on servers: no display

import numpy as np
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

AI_COLOR = "#2b6cb0"
HUMAN_COLOR = "#c05621"
BOOT_COLOR = "#9f7aea"
CHANCE_COLOR = "#718096"
VERDICT_COLORS = {"judged human": "#38a169", "judged AI": "#e53e3e"}
Interval = tuple[float, float]


def _check_lengths(**columns: Sequence[object]) -> int:
    lengths = {name: len(values) for name, values in columns.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"inputs differ in length: {lengths}")
    return next(iter(lengths.values()), 0)


def _whiskers(values: np.ndarray, low: Sequence[float], high: Sequence[float]) -> np.ndarray:
    lo = np.asarray(low, dtype=float)
    hi = np.asarray(high, dtype=float)
    return np.nan_to_num(np.abs(np.vstack([values - lo, hi - values])))


def win_rate_plot(
    witnesses: Sequence[str],
    rates: Sequence[float],
    ci: Sequence[Interval],
    n: Sequence[int],
    *,
    boot_ci: Sequence[Interval] | None = None,
    human_rate: tuple[float, Interval, int] | None = None,
    human_label: str = "human witnesses",
    chance: float = 0.5,
    title: str = "Win rate: how often each witness was judged human",
) -> Figure:
    """One row per AI witness (listed top to bottom as given): the rate, its exact CI as a
    thick whisker, an optional bootstrap CI as a thin one below, and the chance line.
    `human_rate` = (rate, CI, n) of the human witnesses (two-party studies), drawn last."""
    count = _check_lengths(witnesses=witnesses, rates=rates, ci=ci, n=n)
    labels = [f"{w}  (n={k})" for w, k in zip(witnesses, n, strict=True)]
    values = np.asarray(rates, dtype=float)
    lows, highs = [c[0] for c in ci], [c[1] for c in ci]
    rows = count + (human_rate is not None)
    fig = Figure(figsize=(8.0, max(2.6, 1.3 + 0.55 * rows)), dpi=110, layout="constrained")
    ax = fig.add_subplot()
    y = np.arange(count, dtype=float)
    ax.errorbar(
        values,
        y,
        xerr=_whiskers(values, lows, highs),
        fmt="o",
        color=AI_COLOR,
        ecolor=AI_COLOR,
        elinewidth=2.2,
        capsize=4,
        markersize=7,
        label="AI witness, 95% exact CI",
    )
    if boot_ci is not None:
        _check_lengths(witnesses=witnesses, boot_ci=boot_ci)
        ax.errorbar(
            values,
            y + 0.22,
            xerr=_whiskers(values, [c[0] for c in boot_ci], [c[1] for c in boot_ci]),
            fmt="none",
            ecolor=BOOT_COLOR,
            elinewidth=1.2,
            capsize=2,
            label="95% bootstrap CI (interrogators resampled)",
        )
    for yi, value, high in zip(y, values, highs, strict=True):
        _value_label(ax, value, high, yi)
    if human_rate is not None:
        rate, (low, high), k = human_rate
        yh = float(count)
        ax.errorbar(
            [rate],
            [yh],
            xerr=_whiskers(np.array([rate]), [low], [high]),
            fmt="s",
            color=HUMAN_COLOR,
            elinewidth=2.2,
            capsize=4,
            markersize=7,
            label=f"{human_label}, 95% exact CI",
        )
        _value_label(ax, rate, high, yh)
        labels.append(f"{human_label}  (n={k})")
    ax.axvline(chance, color=CHANCE_COLOR, ls="--", lw=1.2, label=f"chance ({chance:.0%})")
    ax.set_yticks(np.arange(rows), labels)
    ax.set_ylim(rows - 0.5, -0.6)  # first witness on top
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("share of games judged human")
    ax.grid(axis="x", alpha=0.3)
    fig.legend(fontsize=8, loc="outside lower center", ncol=3, frameon=False)
    ax.set_title(title)
    return fig


def _value_label(ax: Any, value: float, high: float, y: float) -> None:
    """The value as a percentage just right of its whisker, where nothing else is drawn."""
    x = high if math.isfinite(high) else value
    ax.annotate(
        f"{value:.0%}",
        (x, y),
        xytext=(6, 0),
        textcoords="offset points",
        va="center",
        fontsize=9,
        fontweight="bold",
        color="#1a202c",
    )


def confidence_distributions(
    values: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    title: str = "Verdict confidence by witness and verdict",
) -> Figure:
    """Box plots of confidence (0–100): one row per witness, one box per verdict
    ({witness: {"judged human": [...], "judged AI": [...]}}), with the means as diamonds."""
    witnesses = list(values)
    verdicts = list(VERDICT_COLORS)
    fig = Figure(figsize=(8.0, max(2.8, 1.4 + 0.7 * len(witnesses))), dpi=110, layout="constrained")
    ax = fig.add_subplot()
    offsets = {"judged human": -0.18, "judged AI": 0.18}
    for i, witness in enumerate(witnesses):
        for verdict in verdicts:
            data = np.asarray(values[witness].get(verdict, ()), dtype=float)
            data = data[np.isfinite(data)]
            if not len(data):
                continue
            pos = i + offsets[verdict]
            color = VERDICT_COLORS[verdict]
            ax.boxplot(
                [data],
                positions=[pos],
                orientation="horizontal",
                widths=0.3,
                patch_artist=True,
                showfliers=False,
                medianprops={"color": "black"},
                boxprops={"facecolor": color, "alpha": 0.45, "edgecolor": color},
                whiskerprops={"color": color},
                capprops={"color": color},
            )
            ax.plot(
                [data.mean()],
                [pos],
                marker="D",
                color=color,
                markersize=5,
                markeredgecolor="black",
                markeredgewidth=0.5,
            )
            ax.text(101.5, pos, f"n={len(data)}", va="center", fontsize=7.5, color=color)
    ax.set_yticks(range(len(witnesses)), witnesses)
    ax.set_ylim(len(witnesses) - 0.5, -0.5)
    ax.set_xlim(0, 110)
    ax.set_xticks([0, 20, 40, 60, 80, 100])
    ax.set_xlabel("confidence (0 = total guess, 100 = totally sure)")
    ax.grid(axis="x", alpha=0.3)
    handles = [Line2D([], [], color=c, lw=6, alpha=0.6, label=v) for v, c in VERDICT_COLORS.items()]
    handles.append(Line2D([], [], marker="D", ls="none", color="grey", label="mean"))
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncol=3, frameon=False)
    ax.set_title(title)
    return fig


def calibration_plot(
    curves: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    title: str = "Calibration: accuracy by confidence",
) -> Figure:
    """Small multiples, one panel per witness, from {witness: {"confidence": mean confidence
    per bin, "accuracy", "low", "high", "n"}}. The dashed diagonal is perfect calibration of
    a two-choice verdict: confidence c ↔ c/200 + ½ chance of being right."""
    names = list(curves)
    if not names:
        raise ValueError("curves is empty")
    cols = min(3, len(names))
    rows = math.ceil(len(names) / cols)
    fig = Figure(figsize=(3.1 * cols + 0.6, 2.7 * rows + 0.5), dpi=110, layout="constrained")
    axes = np.atleast_1d(fig.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)).ravel()
    for ax, name in zip(axes, names, strict=False):
        curve = curves[name]
        x = np.asarray(curve["confidence"], dtype=float)
        acc = np.asarray(curve["accuracy"], dtype=float)
        keep = np.isfinite(x) & np.isfinite(acc)
        ax.plot([0, 100], [0.5, 1.0], ls="--", color=CHANCE_COLOR, lw=1)
        ax.axhline(0.5, color="#cbd5e0", lw=0.8)
        ax.errorbar(
            x[keep],
            acc[keep],
            yerr=_whiskers(
                acc[keep], np.asarray(curve["low"])[keep], np.asarray(curve["high"])[keep]
            ),
            fmt="o-",
            color=AI_COLOR if name != "human" else HUMAN_COLOR,
            capsize=3,
            markersize=5,
        )
        for xi, yi, k in zip(x[keep], acc[keep], np.asarray(curve["n"])[keep], strict=True):
            ax.annotate(
                f"{int(k)}",
                (xi, yi),
                xytext=(4, 4),
                textcoords="offset points",
                fontsize=7,
                color="#4a5568",
            )
        ax.set_title(name, fontsize=10)
        ax.set_xlim(-3, 103)
        ax.set_ylim(-0.03, 1.03)
        ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
        ax.grid(alpha=0.3)
    for ax in axes[len(names) :]:
        ax.set_axis_off()
    fig.supxlabel("confidence (mean within bin)")
    fig.supylabel("verdicts correct")
    fig.suptitle(
        title + "\n(bars: 95% exact CI; numbers: verdicts per bin; dashed: calibrated)", fontsize=11
    )
    return fig


def accuracy_by_round(
    rounds: Sequence[int],
    accuracy: Sequence[float],
    ci: Sequence[Interval],
    n: Sequence[int],
    *,
    title: str = "Interrogator accuracy by game order",
) -> Figure:
    """Accuracy (with exact CIs) against the interrogator's round 1..k."""
    _check_lengths(rounds=rounds, accuracy=accuracy, ci=ci, n=n)
    fig = Figure(figsize=(7.0, 3.8), dpi=110, layout="constrained")
    ax = fig.add_subplot()
    values = np.asarray(accuracy, dtype=float)
    ax.errorbar(
        rounds,
        values,
        yerr=_whiskers(values, [c[0] for c in ci], [c[1] for c in ci]),
        fmt="o-",
        color=AI_COLOR,
        capsize=3,
    )
    ax.axhline(0.5, color=CHANCE_COLOR, ls="--", lw=1)
    ax.set_ylim(0, 1)
    ax.set_xticks(list(rounds), [f"{r}\nn={k}" for r, k in zip(rounds, n, strict=True)])
    ax.yaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("round (the interrogator's n-th game)")
    ax.set_ylabel("verdicts correct")
    ax.grid(alpha=0.3)
    ax.set_title(title + "\n(bars: 95% exact CI; dashed: chance)", fontsize=11)
    return fig


def code_shares_plot(
    labels: Sequence[str],
    share: Sequence[float],
    share_ci: Sequence[Interval],
    accuracy: Sequence[float],
    accuracy_ci: Sequence[Interval],
    *,
    overall_accuracy: float | None = None,
    title: str = "Codes",
) -> Figure:
    """Two panels sharing the code axis: the share of games a code occurs in, and the
    interrogators' accuracy in those games (both with CIs). Codes listed top to bottom."""
    count = _check_lengths(
        labels=labels, share=share, share_ci=share_ci, accuracy=accuracy, accuracy_ci=accuracy_ci
    )
    fig = Figure(figsize=(9.5, max(2.8, 1.4 + 0.32 * count)), dpi=110, layout="constrained")
    left, right = fig.subplots(1, 2, sharey=True, width_ratios=(1.2, 1))
    y = np.arange(count)
    shares = np.asarray(share, dtype=float)
    left.barh(y, shares, color="#90cdf4", edgecolor=AI_COLOR)
    left.errorbar(
        shares,
        y,
        xerr=_whiskers(shares, [c[0] for c in share_ci], [c[1] for c in share_ci]),
        fmt="none",
        ecolor="#2c5282",
        capsize=2,
    )
    left.set_xlim(0, max(0.1, min(1.0, float(np.nanmax([c[1] for c in share_ci] or [0])) + 0.05)))
    left.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    left.set_xlabel("share of games with this code")
    acc = np.asarray(accuracy, dtype=float)
    right.errorbar(
        acc,
        y,
        xerr=_whiskers(acc, [c[0] for c in accuracy_ci], [c[1] for c in accuracy_ci]),
        fmt="o",
        color=HUMAN_COLOR,
        capsize=2,
    )
    right.axvline(0.5, color=CHANCE_COLOR, ls="--", lw=1)
    if overall_accuracy is not None and math.isfinite(overall_accuracy):
        right.axvline(overall_accuracy, color="#2f855a", ls=":", lw=1.3)
    right.set_xlim(0, 1)
    right.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    right.set_xlabel(
        "accuracy in those games" + (" (dotted: overall)" if overall_accuracy is not None else "")
    )
    left.set_yticks(y, list(labels))
    left.set_ylim(count - 0.5, -0.5)
    for ax in (left, right):
        ax.grid(axis="x", alpha=0.3)
    fig.suptitle(title + "  (bars: 95% CI; dashed: chance)")
    return fig


def stt_plot(
    sides: Sequence[str],
    rates: Sequence[float],
    ci: Sequence[Interval],
    turns: Sequence[int],
    *,
    is_system: Sequence[bool],
    thresholds: Mapping[str, float] | None = None,
    title: str = "Strong Turing Test: share of turns preferred (tie = ½)",
) -> Figure:
    """One row per side (system vs panel / vs each human, then each human), with the AGI
    and ASI lines."""
    count = _check_lengths(sides=sides, rates=rates, ci=ci, turns=turns, is_system=is_system)
    thresholds = {"AGI": 0.5, "ASI": 0.95} if thresholds is None else thresholds
    fig = Figure(figsize=(8.0, max(2.6, 1.4 + 0.5 * count)), dpi=110, layout="constrained")
    ax = fig.add_subplot()
    values = np.asarray(rates, dtype=float)
    for i in range(count):
        color = AI_COLOR if is_system[i] else HUMAN_COLOR
        ax.errorbar(
            [values[i]],
            [i],
            xerr=_whiskers(values[i : i + 1], [ci[i][0]], [ci[i][1]]),
            fmt="o" if is_system[i] else "s",
            color=color,
            capsize=4,
            elinewidth=2,
        )
        _value_label(ax, values[i], ci[i][1], i)
    for (label, value), style in zip(thresholds.items(), ("--", ":", "-."), strict=False):
        ax.axvline(value, color=CHANCE_COLOR, ls=style, lw=1.2)
        ax.text(
            value,
            -0.75,
            f"{label} {value:.0%}",
            ha="right" if value > 0.9 else "center",
            va="center",
            fontsize=8.5,
            color="#2d3748",
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none"},
            zorder=5,
        )
    ax.set_yticks(range(count), [f"{s}  (turns={t})" for s, t in zip(sides, turns, strict=True)])
    ax.set_ylim(count - 0.4, -1.0)
    ax.set_xlim(0, 1)
    ax.xaxis.set_major_formatter(matplotlib.ticker.PercentFormatter(1.0))
    ax.set_xlabel("share of turns whose reply was preferred")
    ax.grid(axis="x", alpha=0.3)
    handles = [
        Line2D([], [], marker="o", color=AI_COLOR, ls="none", label="system"),
        Line2D([], [], marker="s", color=HUMAN_COLOR, ls="none", label="human"),
    ]
    ax.legend(handles=handles, fontsize=8, loc="lower right", frameon=True)
    ax.set_title(title)
    return fig


def humanness_plot(
    witnesses: Sequence[str],
    humanness: Sequence[float],
    range_05: Sequence[Sequence[Interval]],
    range_01: Sequence[Sequence[Interval]],
    *,
    threshold: float = 0.6,
    title: str = "Degree of humanness with compatible ranges",
) -> Figure:
    """h per witness with its compatible ranges (thin: 1%, thick: 5%; a range may be a union
    of intervals), the threshold (Turing's 0.6 by default) and h = 1 (indistinguishable)."""
    count = _check_lengths(
        witnesses=witnesses, humanness=humanness, range_05=range_05, range_01=range_01
    )
    fig = Figure(figsize=(8.0, max(2.6, 1.4 + 0.5 * count)), dpi=110, layout="constrained")
    ax = fig.add_subplot()
    top = 1.2
    for i in range(count):
        for lo, hi in range_01[i]:
            ax.plot([lo, hi], [i, i], color="#a3bffa", lw=7, solid_capstyle="butt")
            top = max(top, hi)
        for lo, hi in range_05[i]:
            ax.plot([lo, hi], [i, i], color=AI_COLOR, lw=3, solid_capstyle="butt")
            top = max(top, hi)
        if math.isfinite(humanness[i]):
            ax.plot([humanness[i]], [i], "o", color="black", markersize=5, zorder=3)
            ax.annotate(
                f"{humanness[i]:.2f}",
                (humanness[i], i),
                xytext=(0, 7),
                textcoords="offset points",
                ha="center",
                fontsize=8,
            )
    ax.axvline(threshold, color=HUMAN_COLOR, ls=":", lw=1.3)
    ax.axvline(1.0, color=CHANCE_COLOR, ls="--", lw=1.2)
    ax.set_yticks(range(count), list(witnesses))
    ax.set_ylim(count - 0.5, -0.6)
    ax.set_xlim(0, min(2.2, top + 0.05))
    ax.set_xlabel("degree of humanness h = misidentification rate / reference rate")
    ax.grid(axis="x", alpha=0.3)
    handles = [
        Line2D([], [], color=AI_COLOR, lw=3, label="compatible at 5%"),
        Line2D([], [], color="#a3bffa", lw=7, label="compatible at 1%"),
        Line2D([], [], color=HUMAN_COLOR, ls=":", label=f"threshold {threshold:g}"),
        Line2D([], [], color=CHANCE_COLOR, ls="--", label="h = 1 (as human)"),
    ]
    fig.legend(handles=handles, fontsize=8, loc="outside lower center", ncol=4, frameon=False)
    ax.set_title(title)
    return fig

"""Figures of the ITT report: confusion matrices and detectability bars (plain data in)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import matplotlib
import numpy as np
from matplotlib.figure import Figure

from turinglab.report.figures import _new_figure, _text_color


def confusion_grid(matrices: Mapping[str, Sequence[Sequence[float]]]) -> Figure:
    """One 2×2 matrix per panel: rows = true source (H, M), columns = label (H, M)."""
    n = max(1, len(matrices))
    fig = Figure(figsize=(2.6 * n, 2.9), dpi=110, layout="constrained")
    cmap = matplotlib.colormaps["Blues"]
    for k, (title, m) in enumerate(matrices.items()):
        ax = fig.add_subplot(1, n, k + 1)
        data = np.array(m, dtype=float)
        ax.imshow(np.nan_to_num(data), cmap=cmap, vmin=0, vmax=1)
        for i in range(2):
            for j in range(2):
                v = data[i, j]
                ax.text(
                    j,
                    i,
                    "–" if math.isnan(v) else f"{v:.2f}",
                    ha="center",
                    va="center",
                    color=_text_color(cmap(0 if math.isnan(v) else v)),
                    fontsize=11,
                )
        ax.set_xticks([0, 1], ["label H", "label M"])
        ax.set_yticks([0, 1], ["human", "machine"])
        ax.set_title(title, fontsize=9)
    return fig


def detectability_bars(
    values: Mapping[str, Mapping[str, tuple[float, float, float]]], *, title: str
) -> Figure:
    """Grouped bars: groups = models, one bar per judge type, value with its (low, high)."""
    groups = list(values)
    kinds = sorted({k for v in values.values() for k in v})
    fig, ax = _new_figure(max(4.5, 1.3 * len(groups) + 2), 3.8)
    colors = matplotlib.colormaps["tab10"]
    width = 0.8 / max(1, len(kinds))
    for j, kind in enumerate(kinds):
        xs: list[float] = []
        ys: list[float] = []
        errs: list[list[float]] = [[], []]
        for i, g in enumerate(groups):
            if kind not in values[g]:
                continue
            d, lo, hi = values[g][kind]
            if math.isnan(d):
                continue
            xs.append(i + (j - (len(kinds) - 1) / 2) * width)
            ys.append(d)
            # no interval (NaN): no error bar, rather than a zero-length one that looks like one
            errs[0].append(math.nan if math.isnan(lo) else max(0.0, d - lo))
            errs[1].append(math.nan if math.isnan(hi) else max(0.0, hi - d))
        ax.bar(xs, ys, width, yerr=errs, capsize=3, color=colors(j % 10), label=kind)
    ax.axhline(0.5, color="#a0aec0", ls="--", lw=0.8)
    ax.set_xticks(range(len(groups)), groups, rotation=15)
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("imitation detectability")
    # a figure title from the left edge: an axes title wider than a narrow axes is clipped
    fig.suptitle(title + "\n(0.5 = perfect imitator; bars: 95% CI)", fontsize=9, x=0.01, ha="left")
    ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig

"""GTT figures made of several panels: budget curves per pair (the paper's Figure 3), the
≥ε;D graphs of each fixed distinguisher at several ε (Figures 4 left and 20) and how those
hierarchies collapse as ε grows. Plain data in, a Figure out, like `figures`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from turinglab.report.figures import draw_lines, draw_relation, edge_colourbar

Series = Mapping[str, Sequence[float]]  # {"x": [...], "y": [...], optional "low"/"high"}
RelationPanel = tuple[Sequence[str], Sequence[tuple[str, str]], Mapping[tuple[str, str], float]]

POOLED_STYLE = {"color": "black", "lw": 2.4, "marker": "o", "ms": 5, "zorder": 4}
PAIR_STYLE = {"lw": 1.1, "marker": "o", "ms": 3, "alpha": 0.85}


def budget_panels(
    panels: Mapping[str, Mapping[str, Series]],
    *,
    pooled: str,
    xlabels: Mapping[str, str] | None = None,
    title: str = "Fooling probability vs budget",
) -> Figure:
    """One panel per variant; in each, one thin line per pair and the `pooled` line in black
    with its CI band (a band per pair would hide the lines)."""
    if not panels:
        raise ValueError("no budget panels to draw")
    widest = max(len(lines) for lines in panels.values())
    fig = Figure(
        figsize=(4.6 * len(panels) + 2.2, 4.0 + 0.12 * max(0, widest - 8)),
        dpi=110,
        layout="constrained",
    )
    axes = fig.subplots(1, len(panels), squeeze=False)[0]
    for ax, (name, lines) in zip(axes, panels.items(), strict=True):
        series = {
            label: line if label == pooled else {"x": line["x"], "y": line["y"]}
            for label, line in lines.items()
        }
        styles = {label: POOLED_STYLE if label == pooled else PAIR_STYLE for label in series}
        draw_lines(ax, series, styles)
        ax.axhline(0.5, color="#a0aec0", ls="--", lw=0.8)
        ax.set_ylim(-0.02, 1.02)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_xlabel((xlabels or {}).get(name, "budget"))
        ax.set_ylabel("fooling probability 1 − ŝ_B,A")
        ax.set_title(name, fontsize=10)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7.5, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2)
    fig.suptitle(f"{title}  (A → B: A imitates B; black: {pooled}, band 95% CI)", fontsize=10.5)
    return fig


def relation_grid(
    panels: Mapping[str, Mapping[float, RelationPanel]],
    *,
    title: str = "A ≥ε;D B per fixed distinguisher D",
) -> Figure:
    """A block of rows per distinguisher D, its ε values two to a row. Each panel is D's
    relation at that ε, verticalized,
    arrows coloured by d̂; agents without any arrow are left out (as in the paper)."""
    if not panels:
        raise ValueError("no relation panels to draw")
    epsilons = sorted({eps for row in panels.values() for eps in row})
    # Two columns (each D's ε values over as many rows as needed): the figure stays legible
    # when a narrow screen scales it down.
    cols = min(2, len(epsilons))
    per_judge = -(-len(epsilons) // cols)
    fig = Figure(
        figsize=(3.1 * cols + 1.3, 2.9 * per_judge * len(panels) + 0.7),
        dpi=110,
        layout="constrained",
    )
    axes = fig.subplots(per_judge * len(panels), cols, squeeze=False)
    for r, (judge, row) in enumerate(panels.items()):
        for c, eps in enumerate(epsilons):
            ax = axes[r * per_judge + c // cols][c % cols]
            if eps not in row:
                ax.set_axis_off()
                continue
            nodes, edges, values = row[eps]
            arrows = [(a, b) for a, b in edges if a != b]
            left_out = draw_relation(
                ax,
                nodes,
                arrows,
                layout="vertical",
                edge_values=values,
                omit_isolated=True,
                fontsize=7.5,
            )
            if not arrows:
                ax.set_axis_off()
                ax.text(0.5, 0.5, "no arrows", ha="center", va="center", color="#718096")
            note = f", {left_out} without arrows left out" if left_out and arrows else ""
            ax.set_title(f"D = {judge}, ε = {eps:g}\n{len(arrows)} arrows{note}", fontsize=8.5)
            if c % cols:
                ax.set_ylabel("")
    for r in range(len(panels)):  # an odd number of ε leaves a spare panel per D
        for c in range(len(epsilons), per_judge * cols):
            axes[r * per_judge + c // cols][c % cols].set_axis_off()
    edge_colourbar(fig, [ax for row_axes in axes for ax in row_axes])
    fig.suptitle(title + "\n(A → B: D cannot tell A imitating B from B better than ε)")
    return fig


def collapse_curves(
    epsilons: Sequence[float],
    strict: Mapping[str, Sequence[float]],
    classes: Mapping[str, Sequence[float]],
    *,
    title: str = "How each fixed distinguisher's hierarchy collapses as ε grows",
) -> Figure:
    """Per distinguisher D: strict pairs A >ε;D B and equivalence classes of ≅ε;D against ε."""
    fig = Figure(figsize=(9.0, 3.6), dpi=110, layout="constrained")
    left, right = fig.subplots(1, 2)
    for ax, values, label in (
        (left, strict, "strict pairs A >ε;D B"),
        (right, classes, "equivalence classes"),
    ):
        # Dashes differ per D: equal curves (common on small universes) stay visible.
        dashes = ["-", "--", ":", "-."]
        draw_lines(
            ax,
            {f"D = {d}": {"x": epsilons, "y": v} for d, v in values.items()},
            {
                f"D = {d}": {"marker": None, "lw": 1.8, "ls": dashes[k % len(dashes)]}
                for k, d in enumerate(values)
            },
        )
        top = max((max(v, default=0) for v in values.values()), default=0)
        ax.set_ylim(-0.2, top + 0.6)  # counts: from 0, with room above a flat line
        ax.set_xlabel("ε")
        ax.set_ylabel(label)
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    right.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    fig.suptitle(title + "  (a collapsed hierarchy: no strict pair, one class)", fontsize=10)
    return fig

"""Figures for the reports: matplotlib (Agg), plain data in, a Figure out.

Every function takes numbers, names and dicts (no store rows, no analysis objects), so any
report can reuse it; `save_figure` writes PNG + SVG and `figure_svg` gives the SVG text for
embedding inline in an HTML page.
"""

from __future__ import annotations

import io
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib
import networkx as nx
import numpy as np
from matplotlib.axes import Axes
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.ticker import MaxNLocator

# Figures are built with Figure() directly (never pyplot), so they render through Agg/SVG
# canvases on any machine; this also keeps pyplot elsewhere from opening windows.
matplotlib.use("Agg")

RELATION_COLOR = "#2b6cb0"
MUTUAL_COLOR = "#c05621"
Interval = tuple[float, float]


def _new_figure(width: float, height: float) -> tuple[Figure, Axes]:
    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    return fig, fig.add_subplot()


def _text_color(rgba: Sequence[float]) -> str:
    """Black or white, whichever reads better on a cell of this colour."""
    r, g, b = rgba[:3]
    return "black" if 0.299 * r + 0.587 * g + 0.114 * b > 0.55 else "white"


def advantage_heatmap(
    d_hat: np.ndarray,
    actors: Sequence[str],
    distinguishers: Sequence[str],
    n: np.ndarray | None = None,
    *,
    no_answers: np.ndarray | None = None,
    title: str = "Distinguishing advantage d̂(A, B)",
) -> Figure:
    """Rows actors A, columns distinguishers B; diverging colours centred at 0 (d ∈ [−½, ½]).

    With `no_answers` (trials without a verdict per cell) each cell says how many it holds, and
    a cell where they are at least half of its trials is hatched: its colour is mostly the
    missing-answer policy, not the distinguisher's verdicts."""
    d_hat = np.asarray(d_hat, dtype=float)
    if d_hat.shape != (len(actors), len(distinguishers)):
        raise ValueError(
            f"d_hat has shape {d_hat.shape}, expected ({len(actors)}, {len(distinguishers)})"
        )
    if n is not None and np.shape(n) != d_hat.shape:
        raise ValueError(f"n has shape {np.shape(n)}, expected {d_hat.shape}")
    if no_answers is not None and np.shape(no_answers) != d_hat.shape:
        raise ValueError(f"no_answers has shape {np.shape(no_answers)}, expected {d_hat.shape}")
    cell = 0.95 if n is None else 1.05 if no_answers is None else 1.2
    row = 0.75 if no_answers is None else 0.9
    fig, ax = _new_figure(
        max(4.5, 1.6 + cell * len(distinguishers)), max(3.6, 1.5 + row * len(actors))
    )
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="#e2e2e2")
    norm = Normalize(vmin=-0.5, vmax=0.5)
    image = ax.imshow(np.ma.masked_invalid(d_hat), cmap=cmap, norm=norm, aspect="auto")
    for i in range(len(actors)):
        for j in range(len(distinguishers)):
            value = d_hat[i, j]
            if math.isnan(value):
                label, color = "–", "#555555"
            else:
                label, color = f"{value:+.2f}", _text_color(cmap(norm(value)))
            if n is not None:
                label += f"\nn={int(n[i, j])}"
            silent = 0 if no_answers is None else int(no_answers[i, j])
            if silent:
                label += f"\n{silent} no answer"
                total = int(n[i, j]) if n is not None else 0
                if total and 2 * silent >= total:
                    ax.add_patch(
                        Rectangle(
                            (j - 0.5, i - 0.5), 1, 1, fill=False, hatch="///", ec="#4a5568", lw=0
                        )
                    )
            size = 8.5 if no_answers is None else 7.8
            ax.text(j, i, label, ha="center", va="center", color=color, fontsize=size)
    ax.set_xticks(range(len(distinguishers)), list(distinguishers), rotation=35, ha="right")
    ax.set_yticks(range(len(actors)), list(actors))
    ax.set_xlabel("distinguisher B (judges)")
    ax.set_ylabel("actor A (imitates B)")
    legend = "blue: A fools B · red: B tells A apart"
    if no_answers is not None and np.any(no_answers):
        legend += " · hatched: ≥ half without a verdict"
    ax.set_title(f"{title}\n{legend}", fontsize=10)
    bar = fig.colorbar(image, ax=ax, shrink=0.9)
    bar.set_label("d̂ = p̂ − ½")
    return fig


def _vertical_layout(graph: nx.DiGraph) -> dict[str, tuple[float, float]]:
    """Height = number of outgoing edges (self-loops not counted); spread sideways per level."""
    levels: dict[int, list[str]] = {}
    for node in graph.nodes:
        out = sum(1 for _, target in graph.out_edges(node) if target != node)
        levels.setdefault(out, []).append(node)
    pos = {}
    for height, nodes in levels.items():
        for k, node in enumerate(sorted(nodes)):
            # Alternate a small vertical offset so labels on one level do not touch.
            pos[node] = (k - (len(nodes) - 1) / 2, float(height) + 0.12 * (k % 2))
    return pos


EDGE_CMAP = "viridis"
EDGE_NORM = (-0.5, 0.5)  # d̂'s range, so edge colours mean the same in every graph


def edge_colour_scale() -> tuple[matplotlib.colors.Colormap, Normalize]:
    return matplotlib.colormaps[EDGE_CMAP], Normalize(*EDGE_NORM)


def draw_relation(
    ax: Axes,
    nodes: Sequence[str],
    edges: Sequence[tuple[str, str]],
    *,
    layout: str = "circular",
    edge_values: Mapping[tuple[str, str], float] | None = None,
    omit_isolated: bool = False,
    fontsize: float = 8.5,
) -> int:
    """Draw the relation on `ax`: an arrow A → B per related pair (self-loops left out).

    With `edge_values` (d̂ per edge) each arrow takes its colour on `edge_colour_scale()`;
    without, one-way and mutual pairs get two colours. `omit_isolated` leaves out nodes with
    no arrow (as the paper's FD graphs do). Returns how many nodes were left out."""
    if layout not in ("circular", "vertical"):
        raise ValueError(f"layout must be 'circular' or 'vertical', not {layout!r}")
    unknown = {x for edge in edges for x in edge} - set(nodes)
    if unknown:
        raise ValueError(f"edges name nodes that are not in `nodes`: {sorted(unknown)}")
    graph = nx.DiGraph()
    graph.add_edges_from((a, b) for a, b in edges if a != b)
    shown = [x for x in nodes if not omit_isolated or x in graph]
    graph.add_nodes_from(shown)
    if layout == "circular":
        pos = {k: (float(x), float(y)) for k, (x, y) in nx.circular_layout(graph).items()}
        bend = 0.12
    else:
        pos = _vertical_layout(graph)
        bend = 0.25  # arcs, so that edges within a level do not run through other nodes
    groups: list[tuple[list[tuple[str, str]], object]]
    if edge_values is not None:
        cmap, norm = edge_colour_scale()
        groups = [([e], cmap(norm(edge_values[e]))) for e in graph.edges]
    else:
        mutual = {(a, b) for a, b in graph.edges if graph.has_edge(b, a)}
        one_way = [e for e in graph.edges if e not in mutual]
        groups = [(one_way, RELATION_COLOR), (sorted(mutual), MUTUAL_COLOR)]
    for edgelist, color in groups:
        nx.draw_networkx_edges(
            graph,
            pos,
            edgelist=edgelist,
            ax=ax,
            edge_color=[color] * len(edgelist),
            arrows=True,
            arrowsize=13,
            node_size=260,
            width=1.6,
            connectionstyle=f"arc3,rad={bend}",
        )
    nx.draw_networkx_nodes(
        graph, pos, ax=ax, node_size=260, node_color="#edf2f7", edgecolors="#2d3748"
    )
    for node, (x, y) in pos.items():
        if layout == "circular":  # labels outside the circle, away from the edges
            r = math.hypot(x, y) or 1.0
            lx, ly = x * (1 + 0.14 / r), y * (1 + 0.14 / r)
            ha = "left" if x > 0.2 else "right" if x < -0.2 else "center"
        else:
            lx, ly, ha = x, y + 0.2, "center"
        ax.text(
            lx,
            ly,
            node,
            ha=ha,
            va="center",
            fontsize=fontsize,
            zorder=5,
            bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "none", "alpha": 0.85},
        )
    xs = [x for x, _ in pos.values()] or [0.0]
    ys = [y for _, y in pos.values()] or [0.0]
    if layout == "vertical":
        ax.set_xlim(min(xs) - 0.8, max(xs) + 0.8)
        ax.set_ylim(min(ys) - 0.5, max(ys) + 0.6)
        heights = sorted({round(y) for y in ys})
        ax.set_yticks(heights, [str(h) for h in heights])
        ax.set_ylabel("outgoing arrows")
        ax.tick_params(left=True, labelleft=True, bottom=False, labelbottom=False)
        for spine in ("top", "right", "bottom"):
            ax.spines[spine].set_visible(False)
    else:
        ax.set_xlim(-1.55, 1.55)
        ax.set_ylim(-1.35, 1.35)
        ax.set_axis_off()
    return len(nodes) - len(shown)


def edge_colourbar(fig: Figure, axes: Axes | Sequence[Axes]) -> None:
    from matplotlib.cm import ScalarMappable

    cmap, norm = edge_colour_scale()
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=axes, shrink=0.8)
    bar.set_label("arrow colour: d̂(A, B)")


def relation_graph(
    nodes: Sequence[str],
    edges: Sequence[tuple[str, str]],
    *,
    layout: str = "circular",
    title: str = "A ≥ε B",
    edge_values: Mapping[tuple[str, str], float] | None = None,
) -> Figure:
    """A directed graph of a relation: an arrow A → B for each related pair (A, B).

    `layout` is "circular" or "vertical" (nodes placed higher the more outgoing edges they
    have). Self-loops are not drawn. With `edge_values` the arrows are coloured by d̂(A, B)
    (a colour bar says how), as in the paper's Figures 11–13; without, pairs related both
    ways are drawn in a second colour.
    """
    if layout not in ("circular", "vertical"):
        raise ValueError(f"layout must be 'circular' or 'vertical', not {layout!r}")
    arrows = sum(1 for a, b in edges if a != b)
    if layout == "circular":
        side = max(4.2, min(6.4, 2.6 + 0.5 * len(nodes)))  # small universes, small figure
        fig, ax = _new_figure(side + (1.0 if edge_values is not None else 0.0), side)
    else:
        graph = nx.DiGraph()
        graph.add_nodes_from(nodes)
        graph.add_edges_from((a, b) for a, b in edges if a != b)
        pos = _vertical_layout(graph)
        widest = max(Counter(round(y) for _, y in pos.values()).values(), default=1)
        levels = len({round(y) for _, y in pos.values()})
        fig, ax = _new_figure(max(6.0, 1.8 * widest), max(3.2, 1.8 + 1.1 * levels))
    draw_relation(ax, nodes, edges, layout=layout, edge_values=edge_values)
    if edge_values is not None:
        edge_colourbar(fig, ax)
    else:
        legend = [
            Line2D([], [], color=RELATION_COLOR, label="one way"),
            Line2D([], [], color=MUTUAL_COLOR, label="both ways"),
        ]
        ax.legend(handles=legend, loc="lower right", fontsize=8, frameon=False)
    ax.set_title(f"{title}\n({arrows} arrows A → B among {len(nodes)} agents)")
    return fig


def ranking_plot(
    agents: Sequence[str],
    scores: Mapping[str, Sequence[float]],
    intervals: Mapping[str, Sequence[Interval]] | None = None,
    *,
    title: str = "Turing scores",
    unit_interval: bool = True,
    reference: float = 0.5,
    xlabel: str = "score (dashed: ½)",
) -> Figure:
    """One panel per score (e.g. F, D, T), agents sorted by the last score, CIs as error bars.

    Scores are probabilities on a 0–1 axis by default; `unit_interval=False` lets the axis
    follow the data and the intervals (log-odds, say), with a dashed line at `reference`."""
    if not scores:
        raise ValueError("scores is empty")
    for name, values in scores.items():
        if len(values) != len(agents):
            raise ValueError(f"score {name!r} has {len(values)} values for {len(agents)} agents")
    names = list(scores)
    key = np.nan_to_num(np.asarray(scores[names[-1]], dtype=float), nan=-1.0)
    order = np.argsort(key)  # best at the top of each panel
    fig = Figure(
        figsize=(2.2 + 2.4 * len(names), max(2.6, 1.1 + 0.38 * len(agents))),
        dpi=110,
        layout="constrained",
    )
    axes = fig.subplots(1, len(names), sharey=True, squeeze=False)[0]
    y = np.arange(len(agents))
    for ax, name in zip(axes, names, strict=True):
        points = np.asarray(scores[name], dtype=float)[order]
        xerr = None
        if intervals and name in intervals:
            bounds = np.asarray(intervals[name], dtype=float)[order]
            spans = np.vstack([points - bounds[:, 0], bounds[:, 1] - points])
            xerr = np.nan_to_num(np.abs(spans), nan=0.0)  # no interval: no bar
        ax.errorbar(points, y, xerr=xerr, fmt="o", color="#2b6cb0", ecolor="#718096", capsize=3)
        ax.axvline(reference, color="#a0aec0", lw=0.8, ls="--")
        if unit_interval:
            ax.set_xlim(-0.02, 1.02)
        ax.set_title(name)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(y, [agents[i] for i in order])
    if not unit_interval:  # one scale for every panel, so that they compare
        low = min(ax.get_xlim()[0] for ax in axes)
        high = max(ax.get_xlim()[1] for ax in axes)
        for ax in axes:
            ax.set_xlim(min(low, reference - 0.5), max(high, reference + 0.5))
    fig.suptitle(title + ("  (bars: 95% CI)" if intervals else ""))
    return fig


def epsilon_sweep(
    epsilons: Sequence[float],
    related_pairs: Sequence[float],
    violations: Sequence[float],
    *,
    chosen: float | None = None,
    title: str = "How the relation A ≥ε B grows with ε",
) -> Figure:
    """Related ordered pairs and transitivity violations as functions of ε."""
    if not len(epsilons) == len(related_pairs) == len(violations):
        raise ValueError("epsilons, related_pairs and violations differ in length")
    fig = Figure(figsize=(7.5, 3.4), dpi=110, layout="constrained")
    left, right = fig.subplots(1, 2)
    left.step(epsilons, related_pairs, where="post", color=RELATION_COLOR)
    left.set_ylabel("ordered pairs with A ≥ε B")
    right.step(epsilons, violations, where="post", color=MUTUAL_COLOR)
    right.set_ylabel("triples A≥B≥C without A≥C")
    for ax in (left, right):
        ax.set_xlabel("ε")
        ax.grid(alpha=0.3)
        if chosen is not None:
            ax.axvline(chosen, color="#718096", ls=":", lw=1)
    fig.suptitle(title + (f"  (dotted: ε = {chosen:g})" if chosen is not None else ""))
    return fig


def draw_lines(
    ax: Axes,
    series: Mapping[str, Mapping[str, Sequence[float]]],
    styles: Mapping[str, Mapping[str, object]] | None = None,
) -> bool:
    """Plot one line per label (tab10 colours unless `styles` gives plot keywords for it);
    "low"/"high" become a band. Returns whether any band was drawn."""
    colors = matplotlib.colormaps["tab10"]
    banded = False
    for k, (label, line) in enumerate(series.items()):
        if len(line["x"]) != len(line["y"]):
            raise ValueError(f"series {label!r}: x and y differ in length")
        style: dict[str, object] = {"marker": "o", "ms": 4, "color": colors(k % 10)}
        style |= dict((styles or {}).get(label, {}))
        ax.plot(line["x"], line["y"], label=label, **style)  # type: ignore[arg-type]
        if "low" in line and "high" in line:
            banded = True
            ax.fill_between(
                line["x"], line["low"], line["high"], color=style["color"], alpha=0.15, lw=0
            )
    return banded


def line_chart(
    series: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    title: str,
    xlabel: str,
    ylabel: str,
    reference: float | None = None,
    unit_interval: bool = False,
    integer_x: bool = False,
) -> Figure:
    """One line per label from {"x": [...], "y": [...], optional "low"/"high": [...]}; the
    low–high range is drawn as a band. `reference` adds a dashed horizontal line."""
    fig, ax = _new_figure(6.8, 4.0)
    banded = draw_lines(ax, series)
    if reference is not None:
        ax.axhline(reference, color="#a0aec0", ls="--", lw=0.8)
    if unit_interval:
        ax.set_ylim(-0.02, 1.02)
    if integer_x:
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title + ("  (bands: 95% CI)" if banded else ""))
    ax.grid(alpha=0.3)
    if series:
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


def budget_curves(
    curves: Mapping[str, Mapping[str, Sequence[float]]],
    *,
    title: str = "Fooling probability vs budget",
    xlabel: str = "budget (rounds or queries)",
) -> Figure:
    """Fooling probability per budget, one line per label, with CI bands (dashed: ½)."""
    series = {
        label: {"x": c["budget"], "y": c["value"]}
        | ({"low": c["low"], "high": c["high"]} if "low" in c and "high" in c else {})
        for label, c in curves.items()
    }
    return line_chart(
        series,
        title=title,
        xlabel=xlabel,
        ylabel="fooling probability",
        reference=0.5,
        unit_interval=True,
        integer_x=True,
    )


def _spread(values: Sequence[float], gap: float) -> list[float]:
    """Label positions near `values`, at least `gap` apart, each crowd centred on its bands."""
    order = list(np.argsort(values))
    clusters: list[tuple[list[float], float]] = []  # (values, position of the lowest label)
    for v in (float(values[i]) for i in order):
        members, start = [v], v
        while clusters and clusters[-1][1] + gap * len(clusters[-1][0]) > start:
            previous, _ = clusters.pop()
            members = previous + members
            start = float(np.mean(members)) - gap * (len(members) - 1) / 2
        clusters.append((members, start))
    placed = [start + gap * k for members, start in clusters for k in range(len(members))]
    out = [0.0] * len(placed)
    for rank, i in enumerate(order):
        out[i] = placed[rank]
    return out


def electrophoresis(
    lanes: Mapping[str, Mapping[str, float]],
    *,
    title: str = "Fixed-distinguisher scores T_D",
    ylabel: str = "T_D(agent)",
) -> Figure:
    """One lane per fixed distinguisher D; each agent is a band at its score, like a gel."""
    lane_names = list(lanes)
    agents = sorted({a for bands in lanes.values() for a in bands})
    colors = matplotlib.colormaps["tab10" if len(agents) <= 10 else "tab20"]
    color_of = {a: colors(i % colors.N) for i, a in enumerate(agents)}
    fig, ax = _new_figure(max(5.0, 2.1 * len(lane_names) + 1.0), 5.4)
    for x, lane in enumerate(lane_names):
        ax.add_patch(Rectangle((x - 0.3, -0.02), 0.3, 1.04, color="#edf2f7", zorder=0))
        bands = {a: v for a, v in lanes[lane].items() if not math.isnan(v)}
        names = list(bands)
        label_y = _spread([bands[a] for a in names], gap=0.045)
        for agent, ly in zip(names, label_y, strict=True):
            value = bands[agent]
            ax.plot([x - 0.28, x - 0.02], [value, value], color=color_of[agent], lw=4)
            ax.plot([x, x + 0.08], [value, ly], color="#a0aec0", lw=0.6)
            ax.text(x + 0.1, ly, f"{agent} {value:.2f}", va="center", fontsize=8)
    ax.set_xticks(range(len(lane_names)), [f"D = {d}" for d in lane_names])
    ax.set_xlim(-0.5, len(lane_names) - 0.05 + 0.3)
    ax.set_ylim(-0.08, 1.08)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return fig


def category_shares(
    shares: Mapping[str, Mapping[str, float]],
    *,
    title: str = "Share of distinguisher probes by category",
) -> Figure:
    """Stacked horizontal bars: one bar per group (overall, first turn, …), shares per category."""
    groups = list(shares)
    categories = sorted({c for row in shares.values() for c, v in row.items() if v > 0})
    colors = matplotlib.colormaps["tab20" if len(categories) > 10 else "tab10"]
    fig, ax = _new_figure(8.0, max(2.6, 1.6 + 0.42 * len(groups)))
    left = np.zeros(len(groups))
    for k, category in enumerate(categories):
        widths = np.array([shares[g].get(category, 0.0) for g in groups], dtype=float)
        bars = ax.barh(groups, widths, left=left, color=colors(k % colors.N), label=category)
        for bar, width in zip(bars, widths, strict=True):
            if width >= 0.07:
                ax.text(
                    bar.get_x() + width / 2,
                    bar.get_y() + bar.get_height() / 2,
                    f"{width:.0%}",
                    ha="center",
                    va="center",
                    fontsize=7.5,
                    color=_text_color(colors(k % colors.N)),
                )
        left += widths
    ax.invert_yaxis()  # first group on top
    ax.set_xlim(0, max(1.0, float(left.max()) if len(left) else 1.0))
    ax.set_xlabel("share of question units")
    ax.set_title(title)
    ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return fig


def rank_heatmap(
    ranks: np.ndarray,
    agents: Sequence[str],
    sources: Sequence[str],
    *,
    title: str = "Rank by source (1 = best)",
) -> Figure:
    """Rows agents, columns rankings (ours and external leaderboards); cells are ranks."""
    ranks = np.asarray(ranks, dtype=float)
    if ranks.shape != (len(agents), len(sources)):
        raise ValueError(f"ranks has shape {ranks.shape}, expected ({len(agents)}, {len(sources)})")
    fig, ax = _new_figure(max(4.0, 2.2 + 1.2 * len(sources)), max(3.0, 1.3 + 0.45 * len(agents)))
    cmap = matplotlib.colormaps["viridis_r"].with_extremes(bad="#e2e2e2")
    finite = ranks[np.isfinite(ranks)]
    norm = Normalize(vmin=1, vmax=max(2.0, float(finite.max()) if finite.size else 2.0))
    image = ax.imshow(np.ma.masked_invalid(ranks), cmap=cmap, norm=norm, aspect="auto")
    for i in range(len(agents)):
        for j in range(len(sources)):
            value = ranks[i, j]
            text = "–" if math.isnan(value) else f"{value:g}"
            color = "#555555" if math.isnan(value) else _text_color(cmap(norm(value)))
            ax.text(j, i, text, ha="center", va="center", fontsize=9, color=color)
    ax.set_xticks(range(len(sources)), list(sources), rotation=25, ha="right")
    ax.set_yticks(range(len(agents)), list(agents))
    ax.set_title(title)
    fig.colorbar(image, ax=ax, shrink=0.9).set_label("rank")
    return fig


def save_figure(fig: Figure, directory: Path | str, name: str) -> dict[str, Path]:
    """Write `name`.png (150 dpi) and `name`.svg into `directory`; returns {png, svg} paths."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise ValueError(f"figure name {name!r} must be letters, digits, '_', '-' or '.'")
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    paths = {"png": directory / f"{name}.png", "svg": directory / f"{name}.svg"}
    fig.savefig(paths["png"], dpi=150, facecolor="white")
    fig.savefig(paths["svg"], format="svg", facecolor="white", metadata={"Date": None})
    return paths


def figure_svg(fig: Figure, id_prefix: str = "fig") -> str:
    """The figure as an `<svg>` element to inline in HTML.

    The XML prolog, DOCTYPE, namespace declarations and RDF metadata are dropped (HTML needs
    none of them and they hold http:// URIs), and every id is prefixed so that several
    figures on one page cannot collide.
    """
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", facecolor="white", metadata={"Date": None})
    svg = buffer.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'\bid="', f'id="{id_prefix}-', svg)
    svg = re.sub(r'href="#', f'href="#{id_prefix}-', svg)
    svg = svg.replace("url(#", f"url(#{id_prefix}-")
    return svg.strip()

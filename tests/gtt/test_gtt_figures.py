"""The GTT figures as the paper draws them: no-answer counts, arrows coloured by d̂, budget
curves per pair, ≥ε;D graphs per distinguisher and ε, collapse curves, a log-odds axis."""

from __future__ import annotations

import numpy as np
from matplotlib.patches import FancyArrowPatch, Rectangle

from turinglab.report import figures, gtt_figures


def _arrows(ax) -> list[FancyArrowPatch]:
    return [p for p in ax.patches if isinstance(p, FancyArrowPatch)]


def test_heatmap_shows_no_answers_and_hatches_policy_driven_cells() -> None:
    d = np.array([[-0.5, 0.1], [0.0, 0.25]])
    n = np.array([[4, 4], [4, 4]])
    silent = np.array([[3, 1], [0, 0]])
    fig = figures.advantage_heatmap(d, ["a", "b"], ["a", "b"], n, no_answers=silent)
    texts = [t.get_text() for t in fig.axes[0].texts]
    assert texts == [
        "-0.50\nn=4\n3 no answer",
        "+0.10\nn=4\n1 no answer",
        "+0.00\nn=4",
        "+0.25\nn=4",
    ]
    hatched = [p for p in fig.axes[0].patches if isinstance(p, Rectangle) and p.get_hatch()]
    assert [(p.get_x(), p.get_y()) for p in hatched] == [(-0.5, -0.5)]  # 3 of 4 silent only
    assert "without a verdict" in fig.axes[0].get_title()


def test_relation_arrows_take_the_colour_of_their_d() -> None:
    cmap, norm = figures.edge_colour_scale()
    values = {("a", "b"): -0.4, ("b", "c"): 0.0}
    fig = figures.relation_graph(["a", "b", "c"], list(values), edge_values=values)
    colours = sorted(tuple(np.round(a.get_edgecolor(), 3)) for a in _arrows(fig.axes[0]))
    expected = sorted(tuple(np.round(cmap(norm(v)), 3)) for v in values.values())
    assert colours == expected and colours[0] != colours[1]
    assert fig.axes[-1].get_ylabel().startswith("arrow colour")  # the colour bar


def test_budget_panels_draw_one_line_per_pair_and_the_pooled_one() -> None:
    lines = {
        "a → b": {"x": [1, 2, 3], "y": [0.2, 0.4, 0.6]},
        "c → b": {"x": [1, 2, 3], "y": [0.8, 0.5, 0.1]},
        "pooled": {"x": [1, 2, 3], "y": [0.5, 0.45, 0.35], "low": [0.3] * 3, "high": [0.7] * 3},
    }
    fig = gtt_figures.budget_panels({"gtt-turns": lines, "gttq-queries": lines}, pooled="pooled")
    assert len(fig.axes) == 2
    for ax in fig.axes:
        assert [line.get_label() for line in ax.get_lines()[:3]] == list(lines)
        assert len(ax.collections) == 1  # a band for the pooled line only


def test_relation_grid_panels_per_judge_and_epsilon_leave_out_isolated_agents() -> None:
    nodes = ["a", "b", "c"]
    panels = {
        "D1": {0.1: (nodes, [("a", "b")], {("a", "b"): 0.05}), 0.3: (nodes, [], {})},
        "D2": {0.1: (nodes, [("a", "b"), ("b", "c")], {("a", "b"): 0.0, ("b", "c"): 0.1})},
    }
    fig = gtt_figures.relation_grid(panels)
    axes = fig.axes[:4]
    titles = [ax.get_title() for ax in axes]
    assert titles[0] == "D = D1, ε = 0.1\n1 arrows, 1 without arrows left out"
    assert titles[2].startswith("D = D2, ε = 0.1\n2 arrows")
    labels = {t.get_text() for t in axes[0].texts}
    assert labels == {"a", "b"}  # c has no arrow at ε = 0.1 for D1
    assert "no arrows" in {t.get_text() for t in axes[1].texts}
    assert len(_arrows(axes[2])) == 2


def test_collapse_curves_and_the_log_odds_axis() -> None:
    fig = gtt_figures.collapse_curves(
        [0, 0.1, 0.2], {"X": [3, 1, 0], "Y": [3, 1, 0]}, {"X": [1] * 3, "Y": [1] * 3}
    )
    strict, classes = fig.axes[:2]
    assert [line.get_linestyle() for line in strict.get_lines()] == ["-", "--"]
    assert classes.get_ylim()[0] < 0 < 1 < classes.get_ylim()[1]
    fig = figures.ranking_plot(
        ["a", "b"],
        {"θ": [-3.9, 1.3]},
        {"θ": [(-5.6, -2.1), (-0.8, 3.4)]},
        unit_interval=False,
        reference=0.0,
        xlabel="log-odds",
    )
    low, high = fig.axes[0].get_xlim()
    assert low < -5.6 and high > 3.4  # nothing falls off the axis
    assert fig.axes[0].get_lines()[-1].get_xdata()[0] == 0.0  # the reference line at 0

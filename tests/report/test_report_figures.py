"""Report figures: each renders from small hand-made inputs, writes PNG + SVG, and draws what
the input says (annotations, positions, colour scale)."""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from matplotlib.figure import Figure
from matplotlib.patches import FancyArrowPatch

from turinglab.report import figures

AGENTS = ["alpha", "beta", "gamma"]


def _texts(fig: Figure) -> list[str]:
    return [t.get_text() for ax in fig.axes for t in ax.texts]


def _all_figures() -> dict[str, Figure]:
    d = np.array([[0.0, 0.25, np.nan], [-0.1, 0.0, 0.5], [0.05, 0.3, 0.0]])
    return {
        "heatmap": figures.advantage_heatmap(d, AGENTS, AGENTS, np.full((3, 3), 10)),
        "circular": figures.relation_graph(AGENTS, [("alpha", "beta"), ("beta", "alpha")]),
        "vertical": figures.relation_graph(AGENTS, [("alpha", "gamma")], layout="vertical"),
        "ranking": figures.ranking_plot(
            AGENTS, {"F": [0.2, 0.5, 0.7], "T": [0.3, 0.6, 0.4]}, {"F": [(0.1, 0.3)] * 3}
        ),
        "sweep": figures.epsilon_sweep([0, 0.1, 0.2], [1, 3, 6], [0, 2, 1], chosen=0.1),
        "budget": figures.budget_curves(
            {
                "gtt-turns": {
                    "budget": [1, 2],
                    "value": [0.4, 0.3],
                    "low": [0.2, 0.1],
                    "high": [0.6, 0.5],
                }
            }
        ),
        "gel": figures.electrophoresis({"judge": {"alpha": 0.5, "beta": 0.51, "gamma": 0.1}}),
        "shares": figures.category_shares(
            {"overall": {"maths": 0.25, "other": 0.75}, "first turn": {"style": 1.0}}
        ),
        "ranks": figures.rank_heatmap(np.array([[1, 2], [2, np.nan], [3, 1]]), AGENTS, ["T", "X"]),
    }


def test_every_figure_writes_png_and_svg(tmp_path: Path) -> None:
    for name, fig in _all_figures().items():
        paths = figures.save_figure(fig, tmp_path / "out", name)
        assert set(paths) == {"png", "svg"}
        assert paths["png"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        root = ET.parse(paths["svg"]).getroot()  # well-formed XML
        assert root.tag.endswith("svg") and paths["svg"].stat().st_size > 1000, name


def test_inline_svg_has_no_urls_and_prefixed_ids() -> None:
    figs = _all_figures()
    first = figures.figure_svg(figs["heatmap"], id_prefix="one")
    second = figures.figure_svg(figs["sweep"], id_prefix="two")
    for svg, prefix in ((first, "one"), (second, "two")):
        assert svg.startswith("<svg") and svg.endswith("</svg>")
        assert "http" not in svg and "<?xml" not in svg
        ids = re.findall(r'\bid="([^"]+)"', svg)
        assert ids and all(i.startswith(prefix + "-") for i in ids)
        # Every local reference points at an id of the same figure.
        refs = re.findall(r'href="#([^"]+)"', svg) + re.findall(r"url\(#([^)]+)\)", svg)
        assert set(refs) <= set(ids)


def test_heatmap_annotates_d_and_n_and_centres_colours_at_zero() -> None:
    d = np.array([[0.25, np.nan], [0.0, -0.5]])
    fig = figures.advantage_heatmap(d, ["a1", "a2"], ["b1", "b2"], np.array([[10, 0], [4, 6]]))
    assert _texts(fig) == ["+0.25\nn=10", "–\nn=0", "+0.00\nn=4", "-0.50\nn=6"]
    image = fig.axes[0].images[0]
    assert (image.norm.vmin, image.norm.vmax) == (-0.5, 0.5)
    # d = 0 maps to the middle of a diverging map: (near) white.
    assert np.allclose(image.cmap(image.norm(0.0))[:3], (0.97, 0.97, 0.97), atol=0.03)
    assert fig.axes[1].get_ylabel().startswith("d̂")  # the colour bar has a label


def test_vertical_layout_puts_nodes_at_their_out_degree() -> None:
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(["a", "b", "c", "d"])
    graph.add_edges_from([("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("c", "c")])
    pos = figures._vertical_layout(graph)
    # Out-degrees without self-loops: a 3, b 1, c 0, d 0 (± the 0.12 label stagger).
    assert {n: round(y) for n, (_, y) in pos.items()} == {"a": 3, "b": 1, "c": 0, "d": 0}
    assert pos["c"][0] != pos["d"][0]


def test_relation_graph_draws_one_arrow_per_edge_without_self_loops() -> None:
    edges = [("alpha", "beta"), ("beta", "alpha"), ("gamma", "beta"), ("gamma", "gamma")]
    fig = figures.relation_graph(AGENTS, edges)
    arrows = [p for p in fig.axes[0].patches if isinstance(p, FancyArrowPatch)]
    assert len(arrows) == 3
    assert {"alpha", "beta", "gamma"} <= set(_texts(fig))


def test_ranking_plot_orders_agents_by_last_score() -> None:
    fig = figures.ranking_plot(AGENTS, {"F": [0.2, 0.5, 0.7], "T": [0.3, 0.6, 0.4]})
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["alpha", "gamma", "beta"]  # bottom to top: best T at the top


def test_electrophoresis_labels_bands_apart() -> None:
    fig = figures.electrophoresis({"judge": {"alpha": 0.5, "beta": 0.51, "gamma": 0.1}})
    texts = {t.get_text(): t.get_position()[1] for t in fig.axes[0].texts}
    assert set(texts) == {"alpha 0.50", "beta 0.51", "gamma 0.10"}
    assert abs(texts["alpha 0.50"] - texts["beta 0.51"]) >= 0.045 - 1e-9
    assert texts["gamma 0.10"] == pytest.approx(0.10)  # alone: stays at its band


def test_spread_keeps_order_and_centres_crowds() -> None:
    placed = figures._spread([0.5, 0.5, 0.9], gap=0.1)
    assert placed[0] == pytest.approx(0.45) and placed[1] == pytest.approx(0.55)
    assert placed[2] == pytest.approx(0.9)


def test_category_shares_stack_to_the_given_shares() -> None:
    fig = figures.category_shares({"overall": {"maths": 0.25, "other": 0.75}})
    widths = sorted(round(p.get_width(), 6) for p in fig.axes[0].patches)
    assert widths == [0.25, 0.75]
    assert "25%" in _texts(fig) and "75%" in _texts(fig)


def test_rank_heatmap_annotates_ranks() -> None:
    fig = figures.rank_heatmap(np.array([[1, 2], [2, np.nan]]), ["a", "b"], ["T", "X"])
    assert _texts(fig) == ["1", "2", "2", "–"]


@pytest.mark.parametrize(
    "call",
    [
        lambda: figures.advantage_heatmap(np.zeros((2, 3)), ["a", "b"], ["a", "b"]),
        lambda: figures.relation_graph(["a"], [("a", "ghost")]),
        lambda: figures.relation_graph(["a"], [], layout="spiral"),
        lambda: figures.ranking_plot(["a", "b"], {"F": [0.1]}),
        lambda: figures.epsilon_sweep([0, 1], [1], [1, 2]),
        lambda: figures.rank_heatmap(np.zeros((1, 1)), ["a", "b"], ["T"]),
        lambda: figures.save_figure(Figure(), "/tmp", "../escape"),
    ],
)
def test_bad_input_raises_value_error(call) -> None:
    with pytest.raises(ValueError):
        call()


def test_nan_scores_are_tolerated() -> None:
    fig = figures.ranking_plot(
        ["a", "b"], {"T": [math.nan, 0.5]}, {"T": [(math.nan, math.nan), (0.4, 0.6)]}
    )
    assert isinstance(fig, Figure)

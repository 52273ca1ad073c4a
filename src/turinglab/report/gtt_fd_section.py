"""The fixed-distinguisher (FDGTT, FDGTTQ, GDGTT) section of the GTT report: F_D, R_D, T_D and
their "electrophoresis" plot, the recognition table, each D's relation ≥ε;D at several ε (the
paper's Figures 4 left and 20) and how those hierarchies collapse as ε grows."""

from __future__ import annotations

from typing import TYPE_CHECKING

from turinglab.analysis import gtt_fd
from turinglab.analysis import gtt_relations as rel
from turinglab.report import figures, gtt_figures
from turinglab.report.cells import undefined_num as num
from turinglab.variants import FD_VARIANTS

if TYPE_CHECKING:
    from turinglab.report.gtt_context import ReportContext
    from turinglab.report.html import Section

# The paper draws D's graphs at a few ε up to 0.3 (where its best D still stratifies).
GRAPH_EPSILONS = (0.1, 0.2, 0.3)


def fixed_distinguisher_section(ctx: ReportContext) -> None:
    section = ctx.page.section("Fixed distinguisher (FD) scores", "fixed-distinguisher")
    present = [v for v in FD_VARIANTS if ctx.rows_of(v)]
    if not present:
        section.note("No fixed-distinguisher (fdgtt, fdgttq, gdgtt) trials in this run.")
        return
    for variant in present:
        rows = ctx.rows_of(variant)
        agents = ctx.agents_of(rows)
        if len(agents) < 3:
            section.note(f"{variant}: FD scores need at least 3 agents, found {agents}.")
            continue
        _scores(ctx, section, variant, agents)
        _recognition(ctx, section, variant)
        _hierarchies(ctx, section, variant)


def _scores(ctx: ReportContext, section: Section, variant: str, agents: list[str]) -> None:
    scores = gtt_fd.fd_scores(
        ctx.rows_of(variant), agents, variant=variant, missing=ctx.options.policy
    )
    lanes: dict[str, dict[str, float]] = {}
    for s in scores:
        lanes.setdefault(s.distinguisher, {})[s.agent] = s.total
    ctx.figure(
        section,
        figures.electrophoresis(lanes, title=f"T_D per fixed judge D, {variant}"),
        f"{variant}-electrophoresis",
        "Each lane is a fixed distinguisher D; each band an agent at its T_D score.",
    )
    section.table(
        ["D", "agent", "F_D", "R_D", "T_D", "cells (F, R)"],
        [
            [
                s.distinguisher,
                s.agent,
                num(s.fooling),
                num(s.resistance),
                num(s.total),
                f"{s.fooling_cells}, {s.resistance_cells}",
            ]
            for s in scores
        ],
        caption=f"{variant}: F_D fooling D as another agent, R_D resisting impersonation.",
    )


def _recognition(ctx: ReportContext, section: Section, variant: str) -> None:
    level = ctx.options.level
    recognition = gtt_fd.recognition_table(
        ctx.rows_of(variant), variant=variant, missing=ctx.options.policy, level=level
    )
    section.table(
        ["D", "agent", "verdicts", "recognised", "rate", "no answer"],
        [
            [
                r.distinguisher,
                r.agent,
                r.n,
                r.says_target,
                num(r.rate, r.ci, level, why="undefined: D gave no verdict on these trials"),
                r.no_answers,
            ]
            for r in recognition
        ],
        caption=f"{variant} recognition: Pr[D says 1 | X is the target itself], over the "
        "verdicts D gave (trials without one are counted apart, whatever the policy); "
        "hover: CI.",
    )


def _hierarchies(ctx: ReportContext, section: Section, variant: str) -> None:
    rows = ctx.rows_of(variant)
    judges = sorted({r["distinguisher"] for r in rows})
    epsilons = sorted({ctx.options.epsilon, *GRAPH_EPSILONS})
    panels: dict[str, dict[float, gtt_figures.RelationPanel]] = {}
    for judge in judges:
        d = gtt_fd.fd_advantage_matrix(rows, judge, variant=variant, missing=ctx.options.policy)
        nodes = [str(a) for a in d.index]
        panels[judge] = {}
        for eps in epsilons:
            graph = rel.relation_graph(d, eps)
            panels[judge][eps] = (
                nodes,
                list(graph.edges),
                {(a, b): float(v) for a, b, v in graph.edges(data="d")},
            )
    ctx.figure(
        section,
        gtt_figures.relation_grid(panels, title=f"A ≥ε;D B, {variant}"),
        f"{variant}-fd-relations",
        "A block of panels per fixed distinguisher D, one panel per ε: an arrow A → B when D's "
        "success at telling A imitating B from B is at most ½ + ε; colour: that advantage d̂. "
        "Agents without arrows are left out, as in the paper's Figure 20.",
    )
    collapse = gtt_fd.fd_collapse(rows, variant=variant, missing=ctx.options.policy)
    by_judge = {j: g for j, g in collapse.groupby("distinguisher")}
    eps_axis = list(next(iter(by_judge.values()))["eps"])
    ctx.figure(
        section,
        gtt_figures.collapse_curves(
            eps_axis,
            {str(j): list(g["strict_pairs"]) for j, g in by_judge.items()},
            {str(j): list(g["classes"]) for j, g in by_judge.items()},
            title=f"Collapse of each D's hierarchy as ε grows, {variant}",
        ),
        f"{variant}-fd-collapse",
        "Strict pairs A >ε;D B and classes of ≅ε;D per ε: a D whose hierarchy keeps strict "
        "pairs and several classes to a large ε separates the agents better.",
    )

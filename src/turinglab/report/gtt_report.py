"""The publication-grade HTML report of a GTT-family run: `build_gtt_report`.

One function per section. Each reads the run's result rows through the analysis modules, adds
tables and figures to the page, and writes every figure as PNG + SVG next to the HTML. A section
whose data are absent (no gttq rows, no FD rows, …) is replaced by a one-line note, never an
error.
"""

from __future__ import annotations

import math
import os
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from turinglab.analysis import gtt_relations as rel
from turinglab.analysis import rank_agreement as ra
from turinglab.analysis.gtt import (
    PairStats,
    check_estimator,
    describe_estimator,
    pair_table,
    turing_scores,
)
from turinglab.analysis.gtt_budget import budget_curve
from turinglab.analysis.gtt_relations import reflexivity_checks
from turinglab.analysis.gtt_scores import ScoreEstimate, score_report
from turinglab.report import figures, gtt_figures
from turinglab.report.cells import UNDEFINED, undefined_num
from turinglab.report.gtt_context import ReportContext as _Context
from turinglab.report.gtt_context import ReportOptions
from turinglab.report.gtt_fd_section import fixed_distinguisher_section
from turinglab.report.gtt_models import ability_section, theorem3_section
from turinglab.report.gtt_transcripts import transcript_browser, transcript_views
from turinglab.report.html import Cell, CellValue, Page, Section
from turinglab.store.database import RunInfo, Store, analysis_rows
from turinglab.store.export import spend_rows
from turinglab.tagging.probe_rules import PROBE_CODES, probe_report
from turinglab.variants import BUDGET_VARIANTS, MATRIX_VARIANTS

REPORT_FILE = "report.html"
Interval = tuple[float, float]


def _options(raw: Mapping[str, Any]) -> ReportOptions:
    known = {f.name for f in fields(ReportOptions)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"unknown report option(s) {unknown}; known: {sorted(known)}")
    options = ReportOptions(**raw)
    _ = options.policy  # TrialPolicy validates missing/opening with a clear message
    check_estimator(options.estimator)
    if not 0 <= options.epsilon <= 0.5:
        raise ValueError(f"epsilon must lie in [0, 0.5], not {options.epsilon}")
    if not 0 < options.level < 1:
        raise ValueError(f"level must lie in (0, 1), not {options.level}")
    return options


# ---- sections -------------------------------------------------------------------------------

_num = undefined_num


def _shown_ci(x: float, ci: Interval | None, level: float, digits: int = 2) -> Cell:
    """A score with its interval printed under it (and in the hover)."""
    cell = _num(x, ci, level, digits=digits + 1)
    if ci is None or not all(math.isfinite(v) for v in ci):
        return cell
    return Cell(
        cell.text, cell.hover, numeric=True, detail=f"[{ci[0]:.{digits}f}, {ci[1]:.{digits}f}]"
    )


POOLED = "all pairs pooled"
ONE_BRANCH = (
    "undefined: a branch of this cell has no counted trial, so p = ½s_B + ½s_B,A is not estimated"
)


def _overview(ctx: _Context) -> None:
    section = ctx.page.section("Run overview", "overview")
    statuses = sorted({r["status"] for r in ctx.rows})
    variants = sorted({r.get("variant", "gtt") for r in ctx.rows})
    section.paragraph(
        f"{len(ctx.rows)} finished trials of {ctx.run.n_planned} planned; "
        f"{ctx.run.failed_attempts} failed attempts (kept as data, never counted as verdicts)."
    )
    section.paragraph(f"Policy: {ctx.options.policy.describe()}.")
    section.paragraph(
        f"Turing scores: estimator “{ctx.options.estimator}” — "
        f"{describe_estimator(ctx.options.estimator)}."
    )
    if not ctx.rows:
        section.note("No finished trials yet: the analysis sections below are left out.")
        return
    table = []
    for variant in variants:
        counts = Counter(r["status"] for r in ctx.rows_of(variant))
        table.append([variant, sum(counts.values()), *(counts.get(s, 0) for s in statuses)])
    section.table(["variant", "finished", *statuses], table, caption="Trials by outcome")
    _spend(ctx, section)


def _spend(ctx: _Context, section: Section) -> None:
    """Calls, tokens and cost per agent, as the export's spend file counts them."""
    used = spend_rows(ctx.store, ctx.run.id)
    if not used:
        return
    by_agent: dict[str, dict[str, Any]] = {}
    for u in used:
        a = by_agent.setdefault(
            u["agent"], {"calls": 0, "in": 0, "out": 0, "usd": 0.0, "priced": True, "lost": 0}
        )
        a["calls"] += u["calls"]
        a["in"] += u["tokens_in"]
        a["out"] += u["tokens_out"]
        a["lost"] += u["calls"] if u["game_status"] != "finished" else 0
        if u["usd"] is None:
            a["priced"] = False
        else:
            a["usd"] += u["usd"]
    rows: list[list[CellValue]] = [
        [
            agent,
            a["calls"],
            a["lost"],
            a["in"],
            a["out"],
            Cell(f"{a['usd']:.4f}", numeric=True) if a["priced"] else "–",
        ]
        for agent, a in by_agent.items()
    ]
    section.table(
        ["agent", "calls", "unfinished games' calls", "tokens in", "tokens out", "USD"],
        rows,
        caption="What the run spent per agent (every model call, finished or not; the "
        "export's spend file splits it by game status). USD from the config's prices; "
        "– where the config sets no price.",
    )


def _advantage(ctx: _Context, variant: str) -> None:
    section = ctx.page.section(f"Distinguishing advantage d̂ ({variant})", f"{variant}-advantage")
    rows, level = ctx.rows_of(variant), ctx.options.level
    table = pair_table(rows, ctx.options.policy, variant=variant, level=level)
    agents = ctx.agents_of(rows)
    index = {a: i for i, a in enumerate(agents)}
    shape = (len(agents), len(agents))
    d, n, silent = np.full(shape, math.nan), np.zeros(shape, int), np.zeros(shape, int)
    for p in table:
        i, j = index[p.actor], index[p.distinguisher]
        d[i, j], n[i, j], silent[i, j] = p.d_hat, p.n, p.no_answers
    ctx.figure(
        section,
        figures.advantage_heatmap(
            d, agents, agents, n, no_answers=silent, title=f"d̂(A, B), {variant}"
        ),
        f"{variant}-advantage-heatmap",
        "Rows: actor A; columns: distinguisher B. d̂ = p̂ − ½, p̂ = share of trials B got right; "
        "0 means B cannot tell A from itself. Each cell gives its trials and how many had no "
        f"verdict ({ctx.options.policy.describe()}); a hatched cell's colour comes mostly from "
        "that policy. Grey: undefined (a branch without trials). CIs: hover the tables below.",
    )
    by_pair = {(p.actor, p.distinguisher): p for p in table}
    matrix: list[list[CellValue]] = [
        [
            a,
            *(
                _num(by_pair[a, b].d_hat, by_pair[a, b].d_ci, level, signed=True, why=ONE_BRANCH)
                if (a, b) in by_pair
                else _num(None, why="undefined: no trials")
                for b in agents
            ),
        ]
        for a in agents
    ]
    section.table(["actor A \\ distinguisher B", *agents], matrix, caption="d̂ (hover: CI)")
    section.table(
        [
            "actor A",
            "distinguisher B",
            "n",
            "ŝ_B",
            "ŝ_B,A",
            "p̂",
            "d̂",
            "± SE",
            "no answer",
            "opening answer",
        ],
        [_pair_row(p, level) for p in table],
        caption=f"Per ordered pair; hover for exact {level:.0%} Clopper–Pearson CIs. "
        f"Policy: {ctx.options.policy.describe()}. p̂, d̂ and SE are undefined when a branch "
        "has no counted trial.",
    )
    _reflexivity(ctx, section, variant)


def _pair_row(p: PairStats, level: float) -> list[CellValue]:
    return [
        p.actor,
        p.distinguisher,
        p.n,
        _num(p.s_self, p.s_self_ci, level, why="undefined: no counted self-branch trial"),
        _num(p.s_actor, p.s_actor_ci, level, why="undefined: no counted actor-branch trial"),
        _num(p.p_hat, p.p_ci, level, why=ONE_BRANCH),
        _num(p.d_hat, p.d_ci, level, signed=True, why=ONE_BRANCH),
        _num(p.se, why=ONE_BRANCH),
        p.no_answers,
        p.opening_answers,
    ]


def _reflexivity(ctx: _Context, section: Section, variant: str) -> None:
    checks = reflexivity_checks(
        ctx.rows_of(variant),
        ctx.options.epsilon,
        variant=variant,
        missing=ctx.options.policy,
        level=ctx.options.level,
    )
    if not checks:
        section.note(
            "No self-pair (A, A) has trials in both branches: reflexivity cannot be checked."
        )
        return
    section.heading("Reflexivity: can a model tell itself apart? (d(A, A) should be 0)")
    section.table(
        ["agent", "n", "d̂(A, A)", "flagged"],
        [
            [
                c.agent,
                c.n,
                _num(c.d_hat, c.ci, ctx.options.level, signed=True),
                "yes" if c.flagged else "no",
            ]
            for c in checks
        ],
        caption=f"Flagged: |d̂| > ε = {ctx.options.epsilon:g} and the CI excludes 0.",
    )


def _edge_values(d: pd.DataFrame, edges: Iterable[tuple[str, str]]) -> dict[tuple[str, str], float]:
    return {(a, b): float(d.loc[a, b]) for a, b in edges}


def _relations(ctx: _Context, variant: str) -> None:
    eps = ctx.options.epsilon
    section = ctx.page.section(
        f"Relations A ≥ε B at ε = {eps:g} ({variant})", f"{variant}-relations"
    )
    rows = ctx.rows_of(variant)
    d = rel.advantage_matrix(rows, ctx.agents_of(rows), variant=variant, missing=ctx.options.policy)
    agents = [str(a) for a in d.index]
    weak = list(rel.relation_graph(d, eps).edges)
    strict = list(rel.relation_graph(d, eps, strict=True).edges)
    name = f"{variant}-relation"
    title = f"A ≥ε B (d̂(A, B) ≤ {eps:g}), {variant}"
    caption = (
        "An arrow A → B: B cannot tell A from itself better than ε; its colour is d̂(A, B), "
        "the matching heatmap cell (colour bar). Self-pairs not drawn."
    )
    for layout, suffix, extra in (
        ("circular", "circular", " Circular layout."),
        ("vertical", "vertical", " Verticalized: higher = more outgoing arrows."),
    ):
        ctx.figure(
            section,
            figures.relation_graph(
                agents, weak, layout=layout, title=title, edge_values=_edge_values(d, weak)
            ),
            f"{name}-{suffix}",
            caption + extra,
        )
    ctx.figure(
        section,
        figures.relation_graph(
            agents,
            strict,
            layout="vertical",
            title=f"A >ε B, {variant}",
            edge_values=_edge_values(d, strict),
        ),
        f"{name}-strict",
        "Strict relation: A ≥ε B and not B ≥ε A; colours as above.",
    )
    classes = rel.equivalence_classes(d, eps)
    order = rel.class_order(d, eps)
    section.table(
        ["equivalence class (A ≅ε B: related both ways)", "size"],
        [[rel.class_label(c), len(c)] for c in classes],
    )
    section.paragraph(
        "Induced order on the classes (transitive reduction): "
        + ("; ".join(f"{a} above {b}" for a, b in order.edges) or "no class is above another")
        + ("" if order.graph.get("acyclic", True) else " — the class graph has cycles")
        + "."
    )


def _epsilon_sweep(ctx: _Context, variant: str) -> None:
    section = ctx.page.section(f"ε sweep ({variant})", f"{variant}-epsilon-sweep")
    rows = ctx.rows_of(variant)
    d = rel.advantage_matrix(rows, ctx.agents_of(rows), variant=variant, missing=ctx.options.policy)
    sweep = rel.epsilon_sweep(d)
    ctx.figure(
        section,
        figures.epsilon_sweep(
            sweep["eps"],
            sweep["related_pairs"],
            sweep["transitivity_violations"],
            chosen=ctx.options.epsilon,
            title=f"Related pairs and transitivity violations vs ε, {variant}",
        ),
        f"{variant}-epsilon-sweep",
        "Ordered pairs A ≠ B with d̂(A, B) ≤ ε, and ordered triples A ≥ B ≥ C with A ≥ C "
        "measured but false. Neither needs to be monotone in ε.",
    )


NOT_ENOUGH = "not enough data"
NOT_ENOUGH_WHY = (
    "every cell behind this score is 0 % or 100 %, so the bootstrap has no spread and "
    "cannot say how sure its rank is"
)


def _rank_cells(s: ScoreEstimate) -> list[CellValue]:
    if math.isnan(s.rank):
        return [UNDEFINED, UNDEFINED]
    if not s.resolved:
        return [Cell(NOT_ENOUGH, hover=NOT_ENOUGH_WHY), Cell(NOT_ENOUGH, hover=NOT_ENOUGH_WHY)]
    low, high = s.rank_interval
    return [f"{low:g}–{high:g}", _num(s.prob_first)]


def _scores(ctx: _Context, variant: str) -> None:
    section = ctx.page.section(f"Turing scores F, D, T ({variant})", f"{variant}-scores")
    opts = ctx.options
    rows = ctx.rows_of(variant)
    report = score_report(
        rows,
        ctx.agents_of(rows),
        variant=variant,
        missing=opts.policy,
        estimator=opts.estimator,
        n_boot=opts.n_boot,
        level=opts.level,
        seed=opts.seed,
    )
    ctx.scores[variant] = report
    est = report.scores
    section.paragraph(f"Estimator “{report.estimator}”: {describe_estimator(report.estimator)}.")
    section.table(
        [
            "rank",
            "agent",
            "F (fooling)",
            "D (distinguishing)",
            "T",
            "rank range",
            "P(first)",
            "opponents (act, judge)",
        ],
        [
            [
                _num(s.rank, digits=0, why="undefined: the agent lacks F or D"),
                s.agent,
                _shown_ci(s.fooling, s.fooling_ci, opts.level, digits=1),
                _shown_ci(s.distinguishing, s.distinguishing_ci, opts.level, digits=1),
                _shown_ci(s.total, s.total_ci, opts.level, digits=1),
                *_rank_cells(s),
                f"{s.opponents}, {s.judged}",
            ]
            for s in est
        ],
        caption=f"Percentile bootstrap ({report.n_boot} replicates within cells, seed "
        f"{report.seed}, same estimator); {opts.level:.0%} CIs under each value. Ranked by T. "
        f"“{NOT_ENOUGH}”: {NOT_ENOUGH_WHY}.",
    )
    scored = [s for s in est if not math.isnan(s.total)]
    if not scored:
        section.note("No agent has both acted and judged: nothing to plot.")
        return
    ctx.figure(
        section,
        figures.ranking_plot(
            [s.agent for s in scored],
            {
                "F fooling": [s.fooling for s in scored],
                "D distinguishing": [s.distinguishing for s in scored],
                "T total": [s.total for s in scored],
            },
            {
                "F fooling": [s.fooling_ci for s in scored],
                "D distinguishing": [s.distinguishing_ci for s in scored],
                "T total": [s.total_ci for s in scored],
            },
            title=f"Turing scores, {variant}",
        ),
        f"{variant}-scores",
        "Agents sorted by T; bars are bootstrap CIs.",
    )


def _table1(ctx: _Context) -> None:
    """The paper's Table 1: GTT and GTTQ scores side by side, ordered by mean T over both."""
    section = ctx.page.section("Table 1: Turing scores in both settings", "table1")
    plain, queried = ctx.scores.get("gtt"), ctx.scores.get("gttq")
    if plain is None or queried is None:
        section.note("Table 1 needs both gtt and gttq trials; see the score tables above.")
        return
    by = {"gtt": plain.by_agent(), "gttq": queried.by_agent()}
    agents = list(dict.fromkeys([*by["gtt"], *by["gttq"]]))
    names = ("total", "fooling", "distinguishing")

    def value(variant: str, agent: str, name: str) -> float:
        s = by[variant].get(agent)
        return math.nan if s is None else float(getattr(s, name))

    best = {
        (v, name): max((value(v, a, name) for a in agents), default=math.nan)
        for v in by
        for name in names
    }

    def mean_t(agent: str) -> float:
        both = [t for v in by if not math.isnan(t := value(v, agent, "total"))]
        return sum(both) / len(both) if both else math.nan

    means = {a: mean_t(a) for a in agents}
    order = sorted(agents, key=lambda a: (math.isnan(means[a]), -np.nan_to_num(means[a]), a))
    rows: list[list[CellValue]] = []
    for a in order:
        cells: list[CellValue] = [a]
        for v in by:
            for name in names:
                x = value(v, a, name)
                s = by[v].get(a)
                ci = getattr(s, f"{name}_ci") if s is not None else None
                mark = "\u00a0★" if not math.isnan(x) and math.isclose(x, best[v, name]) else ""
                cell = _shown_ci(x, ci, ctx.options.level)
                cells.append(Cell(cell.text + mark, cell.hover, numeric=True, detail=cell.detail))
        cells.append(_num(means[a], digits=3))
        rows.append(cells)
    section.table(
        ["model", "GTT T", "GTT F", "GTT D", "GTTQ T^q", "GTTQ F^q", "GTTQ D^q", "mean T"],
        rows,
        caption="Ordered by the mean of T over the two settings (the paper's Table 1); ★ marks "
        f"the best model for each metric within a setting. Estimator “{ctx.options.estimator}”;"
        f" bootstrap {ctx.options.level:.0%} CIs under each value.",
    )


def _budget_curves(ctx: _Context) -> None:
    section = ctx.page.section("Bounded interaction: budget curves", "budget")
    present = [v for v in BUDGET_VARIANTS if ctx.rows_of(v)]
    if not present:
        section.note("No controlled-turn (gtt-turns) or controlled-query (gttq-queries) trials.")
        return
    level = ctx.options.level
    panels: dict[str, dict[str, dict[str, Any]]] = {}
    for variant in present:
        rows = ctx.rows_of(variant)
        pooled = budget_curve(rows, variant, missing=ctx.options.policy, level=level)
        pairs = budget_curve(rows, variant, per_pair=True, missing=ctx.options.policy, level=level)
        counted = pooled[pooled["n_actor"] > 0]
        if counted.empty:
            section.note(
                f"{variant}: no actor-branch trial counts under the policy "
                f"({ctx.options.policy.describe()}), so there is no fooling curve."
            )
            continue
        lines = {
            f"{a} → {b}": {"x": list(g["budget"]), "y": list(g["fooling"])}
            for (a, b), g in pairs[pairs["n_actor"] > 0].groupby(["actor", "distinguisher"])
        }
        lines[POOLED] = {
            "x": list(counted["budget"]),
            "y": list(counted["fooling"]),
            "low": list(counted["fooling_low"]),
            "high": list(counted["fooling_high"]),
        }
        panels[variant] = lines
        section.table(
            [
                "actor A → distinguisher B",
                "budget",
                "actor trials",
                "fooled",
                "fooling",
                "p̂ (B right)",
            ],
            [
                [
                    "all pairs pooled" if r.actor == "*" else f"{r.actor} → {r.distinguisher}",
                    int(r.budget),
                    int(r.n_actor),
                    int(r.fooled),
                    _num(r.fooling, (r.fooling_low, r.fooling_high), level),
                    _num(r.p_hat, (r.p_low, r.p_high), level, why=ONE_BRANCH),
                ]
                for frame in (pooled, pairs)
                for r in frame.itertuples()
            ],
            caption=f"{variant}: pooled over pairs (self-pairs left out), then per pair; "
            "hover for CIs.",
        )
    if not panels:
        return
    ctx.figure(
        section,
        gtt_figures.budget_panels(
            panels,
            pooled=POOLED,
            xlabels={
                "gtt-turns": "distinguisher rounds",
                "gttq-queries": "specimen queries",
            },
        ),
        "budget-curves",
        "Fooling probability 1 − ŝ_B,A per budget, one line per pair A → B (A imitates B) and "
        "all pairs pooled (black, with its CI band): rounds for gtt-turns, specimen queries "
        "for gttq-queries, as in the paper's Figure 3.",
    )


def _diagnostics(ctx: _Context) -> None:
    section = ctx.page.section("Transcript diagnostics: what distinguishers ask", "diagnostics")
    rows = ctx.rows_of(*MATRIX_VARIANTS, *BUDGET_VARIANTS)
    if not rows:
        section.note("No GTT-family trials with distinguisher transcripts.")
        return
    report = probe_report(rows)
    if not report.overall.n_units:
        section.note("The distinguishers asked no question units.")
        return
    groups = {"overall": report.overall, "first turn": report.first_turn}
    groups |= {f"D = {d}": s for d, s in report.by_distinguisher.items()}
    shares = {g: {c: s.share(c) for c in PROBE_CODES if s.n_units} for g, s in groups.items()}
    ctx.figure(
        section,
        figures.category_shares(shares),
        "probe-diagnostics",
        "Rule-based, conservative classification of each question unit the "
        "distinguisher wrote; 'other' = no explicit cue.",
    )
    section.table(
        ["group", "units", "capability", "signature", "other"],
        [
            [g, s.n_units, *(_num(s.group_share(k)) for k in ("capability", "signature", "other"))]
            for g, s in groups.items()
        ],
        caption="Shares of question units by probe group.",
    )


def _rank_agreement(ctx: _Context) -> None:
    section = ctx.page.section("Agreement with external leaderboards", "leaderboards")
    if not ctx.options.leaderboards:
        section.note("No external leaderboard given (option `leaderboards`).")
        return
    rows = ctx.rows_of("gtt")
    ours = {
        s.agent: s.total
        for s in turing_scores(
            rows, missing=ctx.options.policy, variant="gtt", estimator=ctx.options.estimator
        )
    }
    rankings: dict[str, Mapping[str, float]] = {"T (this run)": ours}
    table: list[list[CellValue]] = []
    for name, source in ctx.options.leaderboards.items():
        board = source if isinstance(source, pd.DataFrame) else ra.load_leaderboard(source)
        rankings[name] = dict(zip(board["agent"], board["score"], strict=True))
        try:
            agree = ra.rank_agreement(ours, board)
        except ra.LeaderboardError as err:
            table.append([name, "–", "–", "–", str(err)])
            continue
        table.append(
            [
                name,
                agree.n,
                _num(agree.kendall_tau),
                _num(agree.spearman_rho),
                f"Kendall p = {agree.kendall_p:.3g}; Spearman p = {agree.spearman_p:.3g}",
            ]
        )
    section.table(["leaderboard", "common agents", "Kendall τ", "Spearman ρ", "notes"], table)
    ranks = ra.rank_table(rankings)
    ctx.figure(
        section,
        figures.rank_heatmap(
            ranks.to_numpy(dtype=float), [str(a) for a in ranks.index], list(ranks.columns)
        ),
        "rank-heatmap",
        "Rank of each agent by T (this run) and by each leaderboard.",
    )


def _transcripts(ctx: _Context) -> None:
    section = ctx.page.section("Transcripts", "transcripts")
    if not ctx.options.transcripts:
        section.note("Transcripts were not embedded (option transcripts=False).")
        return
    rows = ctx.rows
    cap = ctx.options.max_transcripts
    if cap is not None and len(rows) > cap:
        section.note(f"Showing the first {cap} of {len(rows)} transcripts.")
        rows = rows[:cap]
    if not rows:
        section.note("No finished trials to show.")
        return
    section.paragraph(
        "Filter, then click a trial: each participant's own view (what its model was given) "
        "side by side, then the full message log with who could see each message."
    )
    if ctx.options.compress_transcripts:
        section.note(
            "Transcripts are stored compressed in this page and decompressed by the browser "
            "when a trial is opened or the text is searched (any current browser; offline)."
        )
    views = transcript_views(ctx.store, rows)
    section.records(transcript_browser(views, compress=ctx.options.compress_transcripts))


# ---- assembly -------------------------------------------------------------------------------


def build_gtt_report(store: Store, run_id: str, out_dir: Path | str, **options: Any) -> Path:
    """Write `out_dir`/report.html (self-contained) and every figure as PNG + SVG in `out_dir`.

    `run_id` is a run id, unique id prefix or run name. Options: see `ReportOptions`.
    Returns the path of the HTML file. The report is built in a hidden folder beside
    `out_dir` and moved into place only once complete, so a failure leaves no half report.
    """
    opts = _options(options)
    try:
        run = store.resolve_run(run_id)
    except KeyError as err:
        raise ValueError(str(err.args[0])) from None
    out = Path(out_dir)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.", suffix=".partial", dir=out.parent))
    try:
        _build(store, run, staging, opts)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return _publish(staging, out) / REPORT_FILE


def _build(store: Store, run: RunInfo, out: Path, opts: ReportOptions) -> None:
    page = Page(
        f"GTT report: {run.name}",
        {
            "run": run.id,
            "name": run.name,
            "game": run.game,
            "status": run.status,
            "store": store.url,
            "policy": opts.policy.describe(),
            "estimator": f"{opts.estimator} ({describe_estimator(opts.estimator)})",
            "ε": opts.epsilon,
        },
    )
    ctx = _Context(store, run, analysis_rows(store.results(run.id)), opts, out, page)
    _overview(ctx)
    if ctx.rows:
        for variant in MATRIX_VARIANTS:
            if not ctx.rows_of(variant):
                page.section(f"{variant}", f"{variant}-absent").note(
                    f"No {variant} trials in this run: its d̂ matrix, relations and scores "
                    "are left out."
                )
                continue
            _advantage(ctx, variant)
            _relations(ctx, variant)
            _epsilon_sweep(ctx, variant)
            _scores(ctx, variant)
        _table1(ctx)
        ability_section(ctx)
        theorem3_section(ctx)
        _budget_curves(ctx)
        fixed_distinguisher_section(ctx)
        _diagnostics(ctx)
        _rank_agreement(ctx)
    _transcripts(ctx)
    page.write(out / REPORT_FILE)


def _publish(staging: Path, out: Path) -> Path:
    """Move a finished report from `staging` to `out`: a rename when `out` is new, else each
    file replaces its namesake (other files in `out` are left alone)."""
    if not out.exists():
        staging.rename(out)
        return out
    for path in staging.iterdir():
        os.replace(path, out / path.name)
    staging.rmdir()
    return out

"""The publication-grade HTML report of a GTT-family run: `build_gtt_report`.

One function per section. Each reads the run's result rows through the analysis modules, adds
tables and figures to the page, and writes every figure as PNG + SVG next to the HTML. A section
whose data are absent (no gttq rows, no FD rows, …) is replaced by a one-line note, never an
error.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from turinglab.analysis import gtt_fd
from turinglab.analysis import gtt_relations as rel
from turinglab.analysis import rank_agreement as ra
from turinglab.analysis.gtt import (
    MissingPolicy,
    OpeningPolicy,
    PairStats,
    TrialPolicy,
    pair_table,
    turing_scores,
)
from turinglab.analysis.gtt_budget import budget_curve
from turinglab.analysis.gtt_relations import reflexivity_checks
from turinglab.analysis.gtt_scores import score_report
from turinglab.report import figures
from turinglab.report.cells import fmt as _fmt
from turinglab.report.cells import num as _num
from turinglab.report.gtt_models import ability_section, theorem3_section
from turinglab.report.gtt_transcripts import transcript_browser, transcript_views
from turinglab.report.html import CellValue, Page, Section
from turinglab.store.database import RunInfo, Store, analysis_rows
from turinglab.tagging.probe_rules import PROBE_CODES, probe_report
from turinglab.variants import BUDGET_VARIANTS, FD_VARIANTS, MATRIX_VARIANTS

REPORT_FILE = "report.html"
Interval = tuple[float, float]


@dataclass(frozen=True)
class ReportOptions:
    missing: MissingPolicy = "wrong"
    opening: OpeningPolicy = "count"
    epsilon: float = 0.005  # the paper's threshold for the relation graphs
    level: float = 0.95
    n_boot: int = 2000
    seed: int = 0
    # External rankings: {source name: a CSV path or a parsed table (rank_agreement)}.
    leaderboards: Mapping[str, Any] = field(default_factory=dict)
    transcripts: bool = True
    max_transcripts: int | None = None  # cap on embedded transcripts (page size)
    # Transcripts gzip-compressed in the page, inflated by the browser on demand (False: plain
    # JSON, several times bigger).
    compress_transcripts: bool = True

    @property
    def policy(self) -> TrialPolicy:
        return TrialPolicy(self.missing, self.opening)


def _options(raw: Mapping[str, Any]) -> ReportOptions:
    known = {f.name for f in fields(ReportOptions)}
    unknown = sorted(set(raw) - known)
    if unknown:
        raise ValueError(f"unknown report option(s) {unknown}; known: {sorted(known)}")
    options = ReportOptions(**raw)
    _ = options.policy  # TrialPolicy validates missing/opening with a clear message
    if not 0 <= options.epsilon <= 0.5:
        raise ValueError(f"epsilon must lie in [0, 0.5], not {options.epsilon}")
    if not 0 < options.level < 1:
        raise ValueError(f"level must lie in (0, 1), not {options.level}")
    return options


@dataclass
class _Context:
    store: Store
    run: RunInfo
    rows: list[dict[str, Any]]
    options: ReportOptions
    out_dir: Path
    page: Page
    figure_files: dict[str, dict[str, Path]] = field(default_factory=dict)

    def rows_of(self, *variants: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r.get("variant", "gtt") in variants]

    def agents_of(self, rows: Iterable[Mapping[str, Any]]) -> list[str]:
        """Agents in these rows, in the config's universe order first."""
        seen = {r[k] for r in rows for k in ("actor", "distinguisher", "target")}
        universe = self.run.config.get("experiment", {}).get("universe") or []
        ordered = [a for a in universe if a in seen]
        return ordered + sorted(seen - set(ordered))

    def figure(self, section: Section, fig: Figure, name: str, caption: str) -> None:
        files = figures.save_figure(fig, self.out_dir, name)
        self.figure_files[name] = files
        section.figure(figures.figure_svg(fig, id_prefix=name), caption, files)


# ---- sections -------------------------------------------------------------------------------


def _overview(ctx: _Context) -> None:
    section = ctx.page.section("Run overview", "overview")
    statuses = sorted({r["status"] for r in ctx.rows})
    variants = sorted({r.get("variant", "gtt") for r in ctx.rows})
    section.paragraph(
        f"{len(ctx.rows)} finished trials of {ctx.run.n_planned} planned; "
        f"{ctx.run.failed_attempts} failed attempts (kept as data, never counted as verdicts)."
    )
    section.paragraph(f"Policy: {ctx.options.policy.describe()}.")
    if not ctx.rows:
        section.note("No finished trials yet: the analysis sections below are left out.")
        return
    table = []
    for variant in variants:
        counts = Counter(r["status"] for r in ctx.rows_of(variant))
        table.append([variant, sum(counts.values()), *(counts.get(s, 0) for s in statuses)])
    section.table(["variant", "finished", *statuses], table, caption="Trials by outcome")


def _advantage(ctx: _Context, variant: str) -> None:
    section = ctx.page.section(f"Distinguishing advantage d̂ ({variant})", f"{variant}-advantage")
    rows, level = ctx.rows_of(variant), ctx.options.level
    table = pair_table(rows, ctx.options.policy, variant=variant, level=level)
    agents = ctx.agents_of(rows)
    index = {a: i for i, a in enumerate(agents)}
    d = np.full((len(agents), len(agents)), math.nan)
    n = np.zeros((len(agents), len(agents)), dtype=int)
    for p in table:
        d[index[p.actor], index[p.distinguisher]] = p.d_hat if p.n else math.nan
        n[index[p.actor], index[p.distinguisher]] = p.n
    ctx.figure(
        section,
        figures.advantage_heatmap(d, agents, agents, n, title=f"d̂(A, B), {variant}"),
        f"{variant}-advantage-heatmap",
        "Rows: actor A; columns: distinguisher B. d̂ = p̂ − ½, p̂ = share of trials B got right; "
        "0 means B cannot tell A from itself. CIs: hover the tables below.",
    )
    by_pair = {(p.actor, p.distinguisher): p for p in table}
    matrix: list[list[CellValue]] = [
        [
            a,
            *(
                _num(by_pair[a, b].d_hat, by_pair[a, b].d_ci, level, signed=True)
                if (a, b) in by_pair and by_pair[a, b].n
                else _num(None)
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
        f"Policy: {ctx.options.policy.describe()}.",
    )
    _reflexivity(ctx, section, variant)


def _pair_row(p: PairStats, level: float) -> list[CellValue]:
    return [
        p.actor,
        p.distinguisher,
        p.n,
        _num(p.s_self, p.s_self_ci, level),
        _num(p.s_actor, p.s_actor_ci, level),
        _num(p.p_hat, p.p_ci, level),
        _num(p.d_hat, p.d_ci, level, signed=True),
        _num(p.se),
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
        section.note("No self-pairs (A, A) were played: reflexivity cannot be checked.")
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
    caption = "An arrow A → B: B cannot tell A from itself better than ε. Self-pairs not drawn."
    ctx.figure(
        section,
        figures.relation_graph(agents, weak, title=title),
        f"{name}-circular",
        caption + " Circular layout.",
    )
    ctx.figure(
        section,
        figures.relation_graph(agents, weak, layout="vertical", title=title),
        f"{name}-vertical",
        caption + " Verticalized: higher = more outgoing arrows.",
    )
    ctx.figure(
        section,
        figures.relation_graph(agents, strict, layout="vertical", title=f"A >ε B, {variant}"),
        f"{name}-strict",
        "Strict relation: A ≥ε B and not B ≥ε A.",
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


def _scores(ctx: _Context, variant: str) -> None:
    section = ctx.page.section(f"Turing scores F, D, T ({variant})", f"{variant}-scores")
    opts = ctx.options
    rows = ctx.rows_of(variant)
    report = score_report(
        rows,
        ctx.agents_of(rows),
        variant=variant,
        missing=opts.policy,
        n_boot=opts.n_boot,
        level=opts.level,
        seed=opts.seed,
    )
    est = report.scores
    section.table(
        [
            "rank",
            "agent",
            "F (fooling)",
            "D (distinguishing)",
            "T",
            "rank range",
            "P(first)",
            "opponents",
        ],
        [
            [
                _fmt(s.rank, 0),
                s.agent,
                _num(s.fooling, s.fooling_ci, opts.level),
                _num(s.distinguishing, s.distinguishing_ci, opts.level),
                _num(s.total, s.total_ci, opts.level),
                "–"
                if math.isnan(s.rank_interval[0])
                else f"{s.rank_interval[0]:g}–{s.rank_interval[1]:g}",
                _num(s.prob_first),
                s.opponents,
            ]
            for s in est
        ],
        caption=f"Percentile bootstrap ({report.n_boot} replicates within cells, seed "
        f"{report.seed}); hover for {opts.level:.0%} CIs. Ranked by T.",
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


def _budget_curves(ctx: _Context) -> None:
    section = ctx.page.section("Bounded interaction: budget curves", "budget")
    present = [v for v in BUDGET_VARIANTS if ctx.rows_of(v)]
    if not present:
        section.note("No controlled-turn (gtt-turns) or controlled-query (gttq-queries) trials.")
        return
    curves: dict[str, dict[str, Any]] = {}
    for variant in present:
        c = budget_curve(
            ctx.rows_of(variant), variant, missing=ctx.options.policy, level=ctx.options.level
        )
        curves[variant] = {
            "budget": c["budget"],
            "value": c["fooling"],
            "low": c["fooling_low"],
            "high": c["fooling_high"],
        }
        section.table(
            ["budget", "actor trials", "fooled", "fooling", "p̂ (B right)"],
            [
                [
                    int(r.budget),
                    int(r.n_actor),
                    int(r.fooled),
                    _num(r.fooling, (r.fooling_low, r.fooling_high), ctx.options.level),
                    _num(r.p_hat, (r.p_low, r.p_high), ctx.options.level),
                ]
                for r in c.itertuples()
            ],
            caption=f"{variant}, all pairs pooled (self-pairs left out); hover for CIs.",
        )
    ctx.figure(
        section,
        figures.budget_curves(curves),
        "budget-curves",
        "Fooling probability 1 − ŝ_B,A per budget: rounds for gtt-turns, specimen queries "
        "for gttq-queries.",
    )


def _fixed_distinguisher(ctx: _Context) -> None:
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
        scores = gtt_fd.fd_scores(rows, agents, variant=variant, missing=ctx.options.policy)
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
                    _num(s.fooling),
                    _num(s.resistance),
                    _num(s.total),
                    f"{s.fooling_cells}, {s.resistance_cells}",
                ]
                for s in scores
            ],
            caption=f"{variant}: F_D fooling D as another agent, R_D resisting impersonation.",
        )
        recognition = gtt_fd.recognition_table(
            rows, variant=variant, missing=ctx.options.policy, level=ctx.options.level
        )
        section.table(
            ["D", "agent", "n", "recognised", "rate"],
            [
                [
                    r.distinguisher,
                    r.agent,
                    r.n,
                    r.says_target,
                    _num(r.rate, r.ci, ctx.options.level),
                ]
                for r in recognition
            ],
            caption=f"{variant} recognition: Pr[D says 1 | X is the target itself]; hover: CI.",
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
        s.agent: s.total for s in turing_scores(rows, missing=ctx.options.policy, variant="gtt")
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
    Returns the path of the HTML file.
    """
    opts = _options(options)
    try:
        run = store.resolve_run(run_id)
    except KeyError as err:
        raise ValueError(str(err.args[0])) from None
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    page = Page(
        f"GTT report: {run.name}",
        {
            "run": run.id,
            "name": run.name,
            "game": run.game,
            "status": run.status,
            "store": store.url,
            "policy": opts.policy.describe(),
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
        ability_section(ctx)
        theorem3_section(ctx)
        _budget_curves(ctx)
        _fixed_distinguisher(ctx)
        _diagnostics(ctx)
        _rank_agreement(ctx)
    _transcripts(ctx)
    return page.write(out / REPORT_FILE)

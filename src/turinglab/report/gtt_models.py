"""GTT report sections beyond the paper's tables: the ability model and the Theorem 3 check."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from turinglab.report import figures
from turinglab.report.cells import fmt, num

if TYPE_CHECKING:
    from turinglab.report.gtt_context import ReportContext

PRIOR_SD = 2.0  # used only when the plain maximum-likelihood fit does not exist (separation)


def ability_section(ctx: ReportContext) -> None:
    """One fit of all plain-GTT trials: imitation skill θ, discrimination skill φ, bias b."""
    rows = ctx.rows_of("gtt")
    if not rows:
        return
    section = ctx.page.section("Ability model (all GTT trials at once)", "ability")
    from turinglab.analysis.ability import compare_with_turing_scores, fit_ability
    from turinglab.analysis.gtt import turing_scores

    agents = ctx.agents_of(rows)
    try:
        fit = fit_ability(rows, agents)
    except ValueError as plain_err:  # separation, or an agent without usable trials
        try:
            fit = fit_ability(rows, agents, prior_sd=PRIOR_SD)
        except ValueError as err:
            section.note(f"The ability model cannot be fitted to this run: {err}")
            return
        section.note(
            f"The maximum-likelihood fit does not exist here ({plain_err}), so the estimates are "
            f"posterior modes under N(0, {PRIOR_SD}²) priors: they shrink towards 0 where "
            "the data say little."
        )
    section.paragraph(
        "P(D says 'same' | A imitates D) = σ(θ_A − φ_D + b_D) and P(D says 'same' | X is D) = "
        "σ(b_D + c), with Σθ = Σφ = 0. θ is imitation skill, φ discrimination skill, b the "
        f"judge's leaning towards answering 1. {fit.n_trials} trials entered the fit "
        f"({fit.n_excluded} without a verdict left out); 95% Wald CIs from the observed "
        "information."
    )
    level = ctx.options.level
    section.table(
        ["agent", "θ imitation", "φ discrimination", "b bias"],
        [
            [
                a,
                num(fit.theta[a].value, (fit.theta[a].low, fit.theta[a].high), level),
                num(fit.phi[a].value, (fit.phi[a].low, fit.phi[a].high), level),
                num(fit.bias[a].value, (fit.bias[a].low, fit.bias[a].high), level),
            ]
            for a in fit.ranking("theta")
        ],
        caption="Sorted by θ; hover for CIs.",
    )
    scores = turing_scores(
        rows, agents, ctx.options.policy, variant="gtt", estimator=ctx.options.estimator
    )
    try:
        agreement = compare_with_turing_scores(fit, scores)
    except ValueError as err:  # fewer than two agents with both estimates and scores
        section.note(f"No rank agreement with the Turing scores: {err}.")
    else:
        section.paragraph(
            f"Rank agreement with the Turing scores over {len(agreement.agents)} agents: "
            f"Kendall τ(θ, F) = {fmt(agreement.tau_theta_fooling)} "
            f"(p = {fmt(agreement.p_theta_fooling, 3)}), τ(φ, D) = "
            f"{fmt(agreement.tau_phi_distinguishing)} "
            f"(p = {fmt(agreement.p_phi_distinguishing, 3)})."
        )
    order = fit.ranking("theta")
    ctx.figure(
        section,
        figures.ranking_plot(
            order,
            {
                "θ imitation": [fit.theta[a].value for a in order],
                "φ discrimination": [fit.phi[a].value for a in order],
            },
            {
                "θ imitation": [(fit.theta[a].low, fit.theta[a].high) for a in order],
                "φ discrimination": [(fit.phi[a].low, fit.phi[a].high) for a in order],
            },
            title="Ability model estimates (log-odds)",
            unit_interval=False,
            reference=0.0,
            xlabel="log-odds (dashed: 0, the average agent)",
        ),
        "gtt-ability",
        "Imitation and discrimination skills with 95% CIs, on the log-odds scale "
        "(Σθ = Σφ = 0, so 0 is the average agent; not probabilities).",
    )


def theorem3_section(ctx: ReportContext) -> None:
    """Does querying a specimen help the actor, as Theorem 3 says it should (d^q ≤ d + ½ε₂)?"""
    if not ctx.rows_of("gtt") or not ctx.rows_of("gttq"):
        return
    from turinglab.analysis.gtt_budget import theorem3_check

    section = ctx.page.section("Theorem 3: does querying help the actor?", "theorem3")
    check = theorem3_check(
        ctx.rows_of("gtt", "gttq"),
        eps2=ctx.options.epsilon,
        missing=ctx.options.policy,
        level=ctx.options.level,
    )
    section.paragraph(
        "Δ = d̂^q − d̂ per ordered pair (negative: querying helped the actor). A rational actor "
        f"never does worse with a specimen, so Δ > ½ε₂ (ε₂ = {ctx.options.epsilon}) is a "
        "violation; it is significant when the whole CI of Δ lies above ½ε₂. p-values are "
        "Boschloo's exact test on the success counts."
    )
    section.table(
        ["actor", "distinguisher", "d̂", "d̂^q", "Δ", "p (helps)", "p (hurts)", "violation"],
        [
            [
                e.actor,
                e.distinguisher,
                num(e.d_hat, signed=True),
                num(e.d_hat_q, signed=True),
                num(e.diff, e.diff_ci, ctx.options.level, signed=True),
                num(e.p_helps, digits=3),
                num(e.p_hurts, digits=3),
                "significant" if e.violates_significantly else ("yes" if e.violates else "no"),
            ]
            for e in check.pairs
        ],
        caption=f"{len(check.violations)} of {len(check.pairs)} pairs violate d^q ≤ d + ½ε₂.",
    )
    if all(math.isnan(e.diff) for e in check.pairs):
        section.note("No pair has both gtt and gttq trials with verdicts.")

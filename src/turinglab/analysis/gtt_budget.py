"""What interaction budgets and querying do to the advantage (SPEC §1).

Budget curves: for "gtt-turns" (the distinguisher gets exactly `budget` rounds) and
"gttq-queries" (the actor gets exactly `budget` specimen queries) rows, the fooling
probability 1 − ŝ_{B,A} (actor-branch trials) and p̂ (all trials) per budget, with exact CIs.

Theorem 3 (querying should not hurt a rational actor: d^q ≤ d + ½ε₂): per pair, d̂ from "gtt"
rows against d̂^q from "gttq" rows. Δ = d̂^q − d̂ = p̂^q − p̂ (pooled p̂). Its CI is Newcombe's
hybrid score interval (statsmodels); the test compares the two success counts as independent
binomials with Boschloo's exact test (scipy; Fisher's exact test on request). p_helps is the
one-sided p-value for "querying helps the actor" (p^q < p); p_hurts for the opposite.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd
from scipy.stats import boschloo_exact, fisher_exact
from statsmodels.stats.proportion import confint_proportions_2indep

from turinglab.analysis.gtt import (
    Interval,
    MissingPolicy,
    OpeningPolicy,
    PairStats,
    TrialPolicy,
    as_policy,
    exact_ci,
    pair_table,
    select_variant,
    success,
)
from turinglab.variants import BUDGET_VARIANTS

TwoSampleTest = Literal["boschloo", "fisher"]


def budget_curve(
    rows: Iterable[Mapping[str, Any]],
    variant: str = "gtt-turns",
    *,
    per_pair: bool = False,
    include_self_pairs: bool = False,
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
    level: float = 0.95,
) -> pd.DataFrame:
    """One line per budget (and per ordered pair with per_pair=True; pooled pairs show "*").

    Columns: actor, distinguisher, budget, n_actor, fooled, fooling, fooling_low,
    fooling_high, n, successes, p_hat, p_low, p_high. `attrs` holds variant and policy.
    """
    if variant not in BUDGET_VARIANTS:
        raise ValueError(f"variant must be one of {BUDGET_VARIANTS}, not {variant!r}")
    policy = as_policy(missing, opening)
    counts: dict[tuple[str, str, int], list[int]] = {}  # [fooled, n_actor, successes, n]
    for r in select_variant(rows, variant):
        if r.get("budget") is None:
            raise ValueError(f"a {variant} row has no budget (key {r.get('key')!r})")
        if not include_self_pairs and r["actor"] == r["distinguisher"]:
            continue
        hit = success(r, policy)
        if hit is None:
            continue
        pair = (r["actor"], r["distinguisher"]) if per_pair else ("*", "*")
        c = counts.setdefault((*pair, int(r["budget"])), [0, 0, 0, 0])
        if not r["x_is_target"]:
            c[0] += int(not hit)
            c[1] += 1
        c[2] += int(hit)
        c[3] += 1
    records = []
    for (actor, distinguisher, budget), (fooled, n_actor, hits, n) in sorted(counts.items()):
        f_low, f_high = exact_ci(fooled, n_actor, level)
        p_low, p_high = exact_ci(hits, n, level) if n_actor and n - n_actor else (math.nan,) * 2
        records.append(
            {
                "actor": actor,
                "distinguisher": distinguisher,
                "budget": budget,
                "n_actor": n_actor,
                "fooled": fooled,
                "fooling": fooled / n_actor if n_actor else math.nan,
                "fooling_low": f_low,
                "fooling_high": f_high,
                "n": n,
                "successes": hits,
                # p̂ needs both branches (gtt module note): one branch alone is not p.
                "p_hat": hits / n if n_actor and n - n_actor else math.nan,
                "p_low": p_low,
                "p_high": p_high,
            }
        )
    columns = ["actor", "distinguisher", "budget", "n_actor", "fooled", "fooling"]
    columns += ["fooling_low", "fooling_high", "n", "successes", "p_hat", "p_low", "p_high"]
    curve = pd.DataFrame.from_records(records, columns=columns)
    if curve.empty:  # every trial left out: numeric columns still, so plots and sums work
        curve = curve.astype({c: float for c in columns[2:]})
    curve.attrs = {"variant": variant, "policy": policy}
    return curve


@dataclass(frozen=True)
class QueryingEffect:
    actor: str
    distinguisher: str
    n: int  # gtt trials
    successes: int
    d_hat: float
    n_q: int  # gttq trials
    successes_q: int
    d_hat_q: float
    diff: float  # d̂^q − d̂ (negative: querying helped the actor)
    diff_ci: Interval
    p_helps: float  # one-sided, H1: p^q < p
    p_hurts: float  # one-sided, H1: p^q > p
    p_two_sided: float
    violates: bool  # d̂^q > d̂ + ½ε₂
    violates_significantly: bool  # the whole CI of Δ lies above ½ε₂


@dataclass(frozen=True)
class Theorem3Check:
    policy: TrialPolicy
    eps2: float
    level: float
    test: TwoSampleTest
    pairs: list[QueryingEffect]

    @property
    def violations(self) -> list[QueryingEffect]:
        return [p for p in self.pairs if p.violates]


def _two_sample_pvalues(
    k_q: int, n_q: int, k: int, n: int, test: TwoSampleTest
) -> tuple[float, float, float]:
    """(less, greater, two-sided) for H1 about p^q relative to p; columns are the samples."""
    if not n or not n_q:
        return (math.nan, math.nan, math.nan)
    table = [[k_q, k], [n_q - k_q, n - k]]
    if test == "boschloo":
        ps = [float(boschloo_exact(table, alternative=alt).pvalue) for alt in ("less", "greater")]
        return (ps[0], ps[1], min(1.0, 2 * min(ps)))
    if test == "fisher":
        # fisher_exact's rows are the samples, so transpose; its "less" is about the odds ratio.
        rows = [[k_q, n_q - k_q], [k, n - k]]
        less, greater, both = (
            float(fisher_exact(rows, alternative=alt).pvalue)
            for alt in ("less", "greater", "two-sided")
        )
        return (less, greater, both)
    raise ValueError(f"test must be 'boschloo' or 'fisher', not {test!r}")


def _diff_ci(k_q: int, n_q: int, k: int, n: int, level: float) -> Interval:
    if not n or not n_q:
        return (math.nan, math.nan)
    low, high = confint_proportions_2indep(
        k_q, n_q, k, n, method="newcomb", compare="diff", alpha=1 - level
    )
    return (float(low), float(high))


def theorem3_check(
    rows: Iterable[Mapping[str, Any]],
    *,
    eps2: float = 0.0,
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
    level: float = 0.95,
    test: TwoSampleTest = "boschloo",
) -> Theorem3Check:
    """Compare d̂ ("gtt") with d̂^q ("gttq") for every ordered pair present in both."""
    if test not in ("boschloo", "fisher"):
        raise ValueError(f"test must be 'boschloo' or 'fisher', not {test!r}")
    policy = as_policy(missing, opening)
    rows = list(rows)
    plain = _by_pair(pair_table(rows, policy, variant="gtt"))
    queried = _by_pair(pair_table(rows, policy, variant="gttq"))
    effects = []
    for pair in sorted(plain.keys() & queried.keys()):
        p, q = plain[pair], queried[pair]
        k, k_q = p.k_self + p.k_actor, q.k_self + q.k_actor
        diff = q.d_hat - p.d_hat
        ci = _diff_ci(k_q, q.n, k, p.n, level)
        less, greater, both = _two_sample_pvalues(k_q, q.n, k, p.n, test)
        effects.append(
            QueryingEffect(
                actor=pair[0],
                distinguisher=pair[1],
                n=p.n,
                successes=k,
                d_hat=p.d_hat,
                n_q=q.n,
                successes_q=k_q,
                d_hat_q=q.d_hat,
                diff=diff,
                diff_ci=ci,
                p_helps=less,
                p_hurts=greater,
                p_two_sided=both,
                violates=diff > 0.5 * eps2 + 1e-12,
                violates_significantly=ci[0] > 0.5 * eps2,
            )
        )
    return Theorem3Check(policy, eps2, level, test, effects)


def _by_pair(table: list[PairStats]) -> dict[tuple[str, str], PairStats]:
    return {(p.actor, p.distinguisher): p for p in table if p.defined}

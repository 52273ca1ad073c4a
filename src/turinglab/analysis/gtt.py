"""GTT estimates from stored trials: pure functions over result rows (no I/O, no API).

Notation (SPEC §1): for distinguisher B and actor A,
  s_B     = Pr[B says 1 | X is B]                (self branch)
  s_{B,A} = Pr[B says 0 | X is A imitating B]    (actor branch)
  p(A,B)  = ½ s_B + ½ s_{B,A},   d(A,B) = p(A,B) − ½.
A trial's success is "B was right". How trials without a verdict (no-answer, or an opening
message with an unparseable tag) and opening answers enter the estimates is a `TrialPolicy`:
  missing="wrong"   (default) the distinguisher failed: not answering is not being right;
  missing="exclude" the trial is left out;
  missing="as-0" / "as-1" the trial counts as if the distinguisher had said 0 / 1.
  opening="count"   (default) an opening answer counts with its verdict; "exclude" drops it.
Every result carries the policy so that reports can state it.

p̂(A, B) needs both branches: a cell with trials in one branch only has p̂, d̂ and their SE
undefined (NaN), never the one branch's rate (which would read as d̂ = ±½).

Turing scores (Definition 5 / Proposition 2) have two estimators of D (F is the same in both):
  estimator="paper"  (default) D(A) = mean over B ≠ A of p̂(B, A) = ½ŝ_A + ½ŝ_{A,B}, both
                     branches taken from cell (B, A)'s own trials: A's success as distinguisher
                     against a uniform B ≠ A, as Proposition 2 reads D;
  estimator="pooled" ŝ_A pooled over A's self-branch trials in every cell where A judges (the
                     self-pair (A, A) included), D(A) = ½ŝ_A + ½·mean_B ŝ_{A,B}.
With the runner's balanced design (as many self- as actor-branch trials per cell) the per-cell
½ŝ_A + ½ŝ_{A,B} is the cell's pooled p̂; they differ only when a policy drops trials.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

import numpy as np

from turinglab.analysis.stats import binomial_ci

MissingPolicy = Literal["wrong", "exclude", "as-0", "as-1"]
OpeningPolicy = Literal["count", "exclude"]
ScoreEstimator = Literal["paper", "pooled"]
Interval = tuple[float, float]
NAN_INTERVAL: Interval = (math.nan, math.nan)

# Read once: policies are built per trial row in the adaptive loops (get_args is slow).
MISSING_POLICIES: tuple[str, ...] = get_args(MissingPolicy)
OPENING_POLICIES: tuple[str, ...] = get_args(OpeningPolicy)
SCORE_ESTIMATORS: tuple[str, ...] = get_args(ScoreEstimator)
Cell = tuple[str, str, bool]  # (actor, distinguisher, x_is_target)


def check_estimator(estimator: str) -> ScoreEstimator:
    if estimator not in SCORE_ESTIMATORS:
        raise ValueError(f"estimator must be one of {SCORE_ESTIMATORS}, not {estimator!r}")
    return estimator  # type: ignore[return-value]


def describe_estimator(estimator: str) -> str:
    """One sentence a report prints beside the scores."""
    if check_estimator(estimator) == "paper":
        return (
            "Proposition 2: D(A) = mean over B ≠ A of p̂(B, A) = ½ŝ_A + ½ŝ_A,B, each from "
            "cell (B, A)'s own trials; F(A) = mean over B ≠ A of 1 − ŝ_B,A; T = ½F + ½D"
        )
    return (
        "pooled ŝ_A: A's self-branch trials pooled over every cell where A judges (the "
        "self-pair included); D(A) = ½ŝ_A + ½·mean over B ≠ A of ŝ_A,B; T = ½F + ½D"
    )


@dataclass(frozen=True)
class TrialPolicy:
    """How trials without a verdict and opening answers enter every estimate."""

    missing: MissingPolicy = "wrong"
    opening: OpeningPolicy = "count"

    def __post_init__(self) -> None:
        if self.missing not in MISSING_POLICIES:
            raise ValueError(
                f"missing policy must be one of {MISSING_POLICIES}, not {self.missing!r}"
            )
        if self.opening not in OPENING_POLICIES:
            raise ValueError(
                f"opening policy must be one of {OPENING_POLICIES}, not {self.opening!r}"
            )

    def describe(self) -> str:
        missing = {
            "wrong": "trials without a verdict count as the distinguisher being wrong",
            "exclude": "trials without a verdict are left out",
            "as-0": "trials without a verdict count as the answer 0",
            "as-1": "trials without a verdict count as the answer 1",
        }[self.missing]
        opening = (
            "opening answers count with their verdict"
            if self.opening == "count"
            else "opening answers are left out"
        )
        return f"{missing}; {opening}"


def as_policy(
    missing: MissingPolicy | TrialPolicy = "wrong", opening: OpeningPolicy = "count"
) -> TrialPolicy:
    """Accept either a ready policy or its two parts (the older call style passes `missing`)."""
    return missing if isinstance(missing, TrialPolicy) else TrialPolicy(missing, opening)


def effective_verdict(row: Mapping[str, Any], policy: TrialPolicy) -> int | None:
    """The verdict a trial counts with under `policy`; None means: leave this trial out."""
    if policy.opening == "exclude" and row["status"] == "opening-answer":
        return None
    verdict = row["verdict"]
    if verdict is not None:
        return int(verdict)
    if policy.missing == "exclude":
        return None
    if policy.missing == "wrong":
        # The wrong answer: 0 when X was the target, 1 when X was the impostor.
        return 0 if row["x_is_target"] else 1
    return 0 if policy.missing == "as-0" else 1


def success(
    row: Mapping[str, Any],
    missing: MissingPolicy | TrialPolicy = "wrong",
    opening: OpeningPolicy = "count",
) -> bool | None:
    """Did the distinguisher succeed? None means: leave this trial out."""
    verdict = effective_verdict(row, as_policy(missing, opening))
    if verdict is None:
        return None
    return (verdict == 1) == bool(row["x_is_target"])


def select_variant(
    rows: Iterable[Mapping[str, Any]], variant: str | None
) -> list[Mapping[str, Any]]:
    """Rows of one variant (rows without a `variant` key are plain "gtt").

    With variant=None every row is kept, but a mix of variants is refused: pooling GTT with
    GTTQ trials would silently average two different games.
    """
    rows = list(rows)
    if variant is not None:
        return [r for r in rows if r.get("variant", "gtt") == variant]
    present = sorted({r.get("variant", "gtt") for r in rows})
    if len(present) > 1:
        raise ValueError(f"rows hold several variants {present}; pass variant= to choose one")
    return rows


def _rate(values: list[bool]) -> float:
    return sum(values) / len(values) if values else math.nan


def standard_error(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n) if n else math.nan


def two_branch_se(s_self: float, n_self: int, s_actor: float, n_actor: int) -> float:
    """SE of ½ŝ_B + ½ŝ_{B,A} with the branches estimated independently."""
    if not n_self or not n_actor:
        return math.nan
    return 0.5 * math.sqrt(s_self * (1 - s_self) / n_self + s_actor * (1 - s_actor) / n_actor)


def exact_ci(k: int, n: int, level: float = 0.95) -> Interval:
    """Clopper–Pearson interval for k successes in n; NaNs when there are no trials."""
    return binomial_ci(k, n, level=level, method="clopper-pearson") if n else NAN_INTERVAL


@dataclass(frozen=True)
class PairStats:
    actor: str
    distinguisher: str
    n: int  # trials that count under the policy (both branches)
    n_self: int
    n_actor: int
    s_self: float  # ŝ_B
    s_actor: float  # ŝ_{B,A}
    p_hat: float  # pooled success rate over the n trials; NaN unless both branches have trials
    se: float  # √(p̂(1−p̂)/n); NaN where p̂ is
    opening_answers: int
    no_answers: int
    k_self: int = 0  # successes in the self branch
    k_actor: int = 0  # successes in the actor branch
    se_two_branch: float = math.nan  # SE of the branch-balanced p̂ (and of d̂)
    p_ci: Interval = NAN_INTERVAL  # Clopper–Pearson, pooled p̂
    s_self_ci: Interval = NAN_INTERVAL
    s_actor_ci: Interval = NAN_INTERVAL
    excluded: int = 0  # trials the policy left out
    policy: TrialPolicy = field(default_factory=TrialPolicy)

    @property
    def defined(self) -> bool:
        """Both branches have counted trials, so p̂ and d̂ exist."""
        return bool(self.n_self and self.n_actor)

    @property
    def d_hat(self) -> float:
        """Pooled d̂ = p̂ − ½ (equals the balanced one when both branches have n/2 trials)."""
        return self.p_hat - 0.5

    @property
    def p_balanced(self) -> float:
        """½ŝ_B + ½ŝ_{B,A}: unbiased for p when the policy leaves the branches unequal."""
        return 0.5 * self.s_self + 0.5 * self.s_actor

    @property
    def d_balanced(self) -> float:
        return self.p_balanced - 0.5

    @property
    def d_ci(self) -> Interval:
        return (self.p_ci[0] - 0.5, self.p_ci[1] - 0.5)


@dataclass(frozen=True)
class TuringScores:
    agent: str
    fooling: float  # F
    distinguishing: float  # D
    total: float  # T
    opponents: int  # how many B ≠ A had data with A acting
    judged: int = 0  # how many B ≠ A entered D (cells with data with A judging)
    estimator: ScoreEstimator = "paper"


def _group(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[Mapping[str, Any]]]:
    groups: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["actor"], row["distinguisher"]), []).append(row)
    return groups


def pair_table(
    rows: Iterable[Mapping[str, Any]],
    missing: MissingPolicy | TrialPolicy = "wrong",
    *,
    opening: OpeningPolicy = "count",
    variant: str | None = None,
    level: float = 0.95,
) -> list[PairStats]:
    """One line per ordered pair (A, B) that has finished trials."""
    policy = as_policy(missing, opening)
    table = []
    for (actor, distinguisher), group in sorted(_group(select_variant(rows, variant)).items()):
        self_hits = [s for r in group if r["x_is_target"] and (s := success(r, policy)) is not None]
        actor_hits = [
            s for r in group if not r["x_is_target"] and (s := success(r, policy)) is not None
        ]
        n = len(self_hits) + len(actor_hits)
        k_self, k_actor = sum(self_hits), sum(actor_hits)
        # p = ½s_B + ½s_{B,A}: with one branch empty it has no estimate (see the module note).
        both = bool(self_hits) and bool(actor_hits)
        p_hat = _rate(self_hits + actor_hits) if both else math.nan
        s_self, s_actor = _rate(self_hits), _rate(actor_hits)
        table.append(
            PairStats(
                actor=actor,
                distinguisher=distinguisher,
                n=n,
                n_self=len(self_hits),
                n_actor=len(actor_hits),
                s_self=s_self,
                s_actor=s_actor,
                p_hat=p_hat,
                se=standard_error(p_hat, n),
                opening_answers=sum(r["status"] == "opening-answer" for r in group),
                no_answers=sum(r["verdict"] is None for r in group),
                k_self=k_self,
                k_actor=k_actor,
                se_two_branch=two_branch_se(s_self, len(self_hits), s_actor, len(actor_hits)),
                p_ci=exact_ci(k_self + k_actor, n, level) if both else NAN_INTERVAL,
                s_self_ci=exact_ci(k_self, len(self_hits), level),
                s_actor_ci=exact_ci(k_actor, len(actor_hits), level),
                excluded=len(group) - n,
                policy=policy,
            )
        )
    return table


def cell_counts(
    rows: Iterable[Mapping[str, Any]], policy: TrialPolicy
) -> dict[Cell, tuple[int, int]]:
    """(successes, trials) per ordered pair × branch, after the policy (cells with trials)."""
    counts: dict[Cell, list[int]] = {}
    for row in rows:
        hit = success(row, policy)
        if hit is None:
            continue
        k_n = counts.setdefault(
            (row["actor"], row["distinguisher"], bool(row["x_is_target"])), [0, 0]
        )
        k_n[0] += int(hit)
        k_n[1] += 1
    return {cell: (k, n) for cell, (k, n) in counts.items()}


ScoreArrays = tuple[np.ndarray, np.ndarray, np.ndarray]


def _mean_of(arrays: list[np.ndarray], size: int) -> np.ndarray:
    return np.mean(arrays, axis=0) if arrays else np.full(size, math.nan)


def scores_from_counts(
    k: Mapping[Cell, np.ndarray],
    n: Mapping[Cell, int],
    agents: Sequence[str],
    estimator: ScoreEstimator = "paper",
) -> dict[str, ScoreArrays]:
    """F, D, T per agent for each replicate column of the success counts `k` (one column for
    the point estimate, one per bootstrap replicate). Pairs without data are left out of the
    means; a score with no pair at all is NaN."""
    check_estimator(estimator)
    size = len(next(iter(k.values()))) if k else 1
    rate = {c: np.asarray(k[c], dtype=float) / n[c] for c in k}
    out = {}
    for a in agents:
        others = [b for b in agents if b != a]
        # 1 − s_{B,A}: B failed to catch A in the actor branch of cell (A, B).
        fooling = _mean_of([1 - rate[(a, b, False)] for b in others if (a, b, False) in rate], size)
        if estimator == "paper":
            # p(B, A) = ½s_A + ½s_{A,B} from cell (B, A)'s own two branches.
            per_cell = [
                0.5 * rate[(b, a, True)] + 0.5 * rate[(b, a, False)]
                for b in others
                if (b, a, True) in rate and (b, a, False) in rate
            ]
            distinguishing = _mean_of(per_cell, size)
        else:
            self_cells = [c for c in k if c[1] == a and c[2]]
            trials = sum(n[c] for c in self_cells)
            s_a = (
                sum(np.asarray(k[c], dtype=float) for c in self_cells) / trials
                if trials
                else np.full(size, math.nan)
            )
            catching = _mean_of(
                [rate[(b, a, False)] for b in others if (b, a, False) in rate], size
            )
            distinguishing = 0.5 * np.asarray(s_a, dtype=float) + 0.5 * catching
        out[a] = (fooling, distinguishing, 0.5 * fooling + 0.5 * distinguishing)
    return out


def judged_pairs(
    counts: Mapping[Cell, Any], agent: str, others: Iterable[str], estimator: str
) -> int:
    """How many B ≠ A enter D(A): cells (B, A) with both branches ("paper") or an actor branch."""
    if estimator == "paper":
        return sum((b, agent, True) in counts and (b, agent, False) in counts for b in others)
    return sum((b, agent, False) in counts for b in others)


def turing_scores(
    rows: Iterable[Mapping[str, Any]],
    universe: Sequence[str] | None = None,
    missing: MissingPolicy | TrialPolicy = "wrong",
    *,
    opening: OpeningPolicy = "count",
    variant: str | None = None,
    estimator: ScoreEstimator = "paper",
) -> list[TuringScores]:
    """F, D and T per agent (SPEC §1; estimators: module note). Pairs with no data are left
    out of the averages. On "gttq" rows these are the querying scores F^q, D^q, T^q."""
    check_estimator(estimator)
    policy = as_policy(missing, opening)
    rows = select_variant(rows, variant)
    counts = cell_counts(rows, policy)
    agents = list(
        universe or sorted({r["actor"] for r in rows} | {r["distinguisher"] for r in rows})
    )
    point = scores_from_counts(
        {c: np.array([kn[0]]) for c, kn in counts.items()},
        {c: kn[1] for c, kn in counts.items()},
        agents,
        estimator,
    )
    scores = []
    for a in agents:
        others = [b for b in agents if b != a]
        f, d, t = (float(v[0]) for v in point[a])
        scores.append(
            TuringScores(
                agent=a,
                fooling=f,
                distinguishing=d,
                total=t,
                opponents=sum((a, b, False) in counts for b in others),
                judged=judged_pairs(counts, a, others, estimator),
                estimator=estimator,
            )
        )
    return scores


def outcome_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts

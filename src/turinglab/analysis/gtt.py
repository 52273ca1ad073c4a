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
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from turinglab.analysis.stats import binomial_ci

MissingPolicy = Literal["wrong", "exclude", "as-0", "as-1"]
OpeningPolicy = Literal["count", "exclude"]
Interval = tuple[float, float]
NAN_INTERVAL: Interval = (math.nan, math.nan)

# Read once: policies are built per trial row in the adaptive loops (get_args is slow).
MISSING_POLICIES: tuple[str, ...] = get_args(MissingPolicy)
OPENING_POLICIES: tuple[str, ...] = get_args(OpeningPolicy)


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
    n: int  # trials that enter p̂
    n_self: int
    n_actor: int
    s_self: float  # ŝ_B
    s_actor: float  # ŝ_{B,A}
    p_hat: float  # pooled success rate over the n trials
    se: float  # √(p̂(1−p̂)/n)
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
    opponents: int  # how many B ≠ A had data


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
        p_hat = _rate(self_hits + actor_hits)
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
                p_ci=exact_ci(k_self + k_actor, n, level),
                s_self_ci=exact_ci(k_self, len(self_hits), level),
                s_actor_ci=exact_ci(k_actor, len(actor_hits), level),
                excluded=len(group) - n,
                policy=policy,
            )
        )
    return table


def _mean(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return sum(values) / len(values) if values else math.nan


def turing_scores(
    rows: Iterable[Mapping[str, Any]],
    universe: list[str] | None = None,
    missing: MissingPolicy | TrialPolicy = "wrong",
    *,
    opening: OpeningPolicy = "count",
    variant: str | None = None,
) -> list[TuringScores]:
    """F, D and T per agent (SPEC §1). Pairs with no data are left out of the averages.

    On "gttq" rows these are the querying scores F^q, D^q, T^q (same formulas).
    """
    policy = as_policy(missing, opening)
    rows = select_variant(rows, variant)
    agents = universe or sorted({r["actor"] for r in rows} | {r["distinguisher"] for r in rows})
    # s_{B,A}: success of distinguisher B against actor A, from actor-branch trials.
    s_pair: dict[tuple[str, str], float] = {}
    for (actor, distinguisher), group in _group(rows).items():
        hits = [s for r in group if not r["x_is_target"] and (s := success(r, policy)) is not None]
        if hits:
            s_pair[(distinguisher, actor)] = _rate(hits)
    scores = []
    for a in agents:
        # s_A pools A's self-branch trials over every pair where A distinguishes.
        s_a = _rate(
            [
                s
                for r in rows
                if r["distinguisher"] == a
                and r["x_is_target"]
                and (s := success(r, policy)) is not None
            ]
        )
        others = [b for b in agents if b != a]
        fooling = _mean([1 - s_pair.get((b, a), math.nan) for b in others])
        catching = _mean([s_pair.get((a, b), math.nan) for b in others])
        distinguishing = 0.5 * s_a + 0.5 * catching
        scores.append(
            TuringScores(
                agent=a,
                fooling=fooling,
                distinguishing=distinguishing,
                total=0.5 * fooling + 0.5 * distinguishing,
                opponents=sum((b, a) in s_pair for b in others),
            )
        )
    return scores


def outcome_counts(rows: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for row in rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    return counts

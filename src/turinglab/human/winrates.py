"""Win rates of AI witnesses (SPEC §2): exact and bootstrap CIs, tests against chance,
family corrections.

A witness's win rate = share of its games in which the interrogator judged it human;
interrogator accuracy on it = 1 − win rate. Per (study, AI witness):
  * exact Clopper–Pearson CI (stats.binomial_ci);
  * cluster-bootstrap percentile CI: interrogators are resampled as units (their games stay
    together), `n_boot` resamples, seeded by `seed` — so it reflects between-interrogator
    variation that the binomial CI ignores;
  * one-sided exact binomial tests against chance 0.5, both directions ("greater": the witness
    is judged human more often than chance; "less": less often), and the Wald z of the intercept
    of an intercept-only logistic regression (stats.wald_test; NaN when 0 or n wins);
  * two-party only: one-sided Fisher exact tests against the human witnesses' judged-human
    rate in the same study (two independent samples, so the human rate's own uncertainty
    counts);
  * corrections over the AI witnesses of a study (the family), for each direction:
    reverse Bonferroni (p/m, capped at 1: stricter for claims of "no difference"), Holm and
    Benjamini–Hochberg (stats.adjust_pvalues). Keys of `adjusted`: "<direction>_<method>".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy.stats import fisher_exact

from turinglab.analysis import stats

Correction = Literal["bonferroni", "reverse-bonferroni", "holm", "fdr_bh"]
CORRECTIONS: tuple[Correction, ...] = ("reverse-bonferroni", "holm", "fdr_bh")


@dataclass(frozen=True)
class WinRate:
    study: str
    witness: str
    format: str
    n: int
    wins: int
    n_interrogators: int
    win_rate: float
    ci_low: float  # exact (Clopper–Pearson)
    ci_high: float
    boot_low: float  # cluster bootstrap over interrogators
    boot_high: float
    chance: float
    p_greater: float  # exact one-sided, H1: win rate > chance
    p_less: float  # exact one-sided, H1: win rate < chance
    wald_z: float
    wald_p_greater: float
    wald_p_less: float
    human_rate: float = math.nan  # two-party: human witnesses' judged-human rate
    n_human: int = 0
    p_greater_vs_human: float = math.nan  # Fisher exact one-sided
    p_less_vs_human: float = math.nan
    adjusted: dict[str, float] = field(default_factory=dict)

    @property
    def interrogator_accuracy(self) -> float:
        return 1.0 - self.win_rate


def win_rates(
    df: pd.DataFrame,
    *,
    level: float = 0.95,
    n_boot: int = 2000,
    seed: int = 0,
    chance: float = 0.5,
    corrections: Sequence[Correction] = CORRECTIONS,
) -> list[WinRate]:
    """One WinRate per (study, AI witness), sorted by study and descending win rate."""
    results: list[WinRate] = []
    for (study, fmt), rows in df.groupby(["study", "format"], sort=True):
        humans = rows[rows["witness_type"] == "human"]
        family = [
            _one(str(study), str(fmt), str(w), g, humans, level, n_boot, seed, chance)
            for w, g in rows[rows["witness_type"] == "ai"].groupby("witness", sort=True)
        ]
        results.extend(_corrected(family, corrections))
    return sorted(results, key=lambda r: (r.study, -r.win_rate, r.witness))


def win_rates_frame(results: Sequence[WinRate]) -> pd.DataFrame:
    """A flat table: one row per witness, `adjusted` spread into p_<direction>_<method>."""
    records = []
    for r in results:
        record = asdict(r)
        adjusted = record.pop("adjusted")
        record["interrogator_accuracy"] = r.interrogator_accuracy
        record.update({f"p_{key}": value for key, value in adjusted.items()})
        records.append(record)
    return pd.DataFrame.from_records(records)


def _one(
    study: str,
    fmt: str,
    witness: str,
    rows: pd.DataFrame,
    humans: pd.DataFrame,
    level: float,
    n_boot: int,
    seed: int,
    chance: float,
) -> WinRate:
    n, wins = len(rows), int(rows["judged_human"].sum())
    low, high = stats.binomial_ci(wins, n, level=level, method="clopper-pearson")
    boot_low, boot_high = cluster_bootstrap_ci(rows, level=level, n_boot=n_boot, seed=seed)
    wald = stats.wald_test(wins, n, chance=chance)
    extra: dict[str, float | int] = {}
    if fmt == "two-party" and len(humans):
        h_n, h_wins = len(humans), int(humans["judged_human"].sum())
        table = [[wins, n - wins], [h_wins, h_n - h_wins]]
        extra = {
            "human_rate": h_wins / h_n,
            "n_human": h_n,
            "p_greater_vs_human": float(fisher_exact(table, alternative="greater")[1]),
            "p_less_vs_human": float(fisher_exact(table, alternative="less")[1]),
        }
    return WinRate(
        study=study,
        witness=witness,
        format=fmt,
        n=n,
        wins=wins,
        n_interrogators=int(rows["interrogator"].nunique()),
        win_rate=wins / n,
        ci_low=low,
        ci_high=high,
        boot_low=boot_low,
        boot_high=boot_high,
        chance=chance,
        p_greater=stats.exact_binomial_test(wins, n, p=chance, alternative="greater"),
        p_less=stats.exact_binomial_test(wins, n, p=chance, alternative="less"),
        wald_z=_nan_if_none(wald.z),
        wald_p_greater=_nan_if_none(wald.p_greater),
        wald_p_less=_nan_if_none(wald.p_less),
        **extra,  # type: ignore[arg-type]
    )


def _nan_if_none(value: float | None) -> float:
    """stats.wald_test gives None when 0 or n wins make the log-odds infinite."""
    return math.nan if value is None else float(value)


def cluster_bootstrap_ci(
    rows: pd.DataFrame, *, level: float = 0.95, n_boot: int = 2000, seed: int = 0
) -> tuple[float, float]:
    """Percentile CI of the pooled win rate, resampling interrogators as clusters."""
    per_interrogator = rows.groupby("interrogator")["judged_human"].agg(["sum", "count"])
    wins = per_interrogator["sum"].to_numpy(dtype=float)
    games = per_interrogator["count"].to_numpy(dtype=float)
    if len(wins) == 0:
        raise ValueError("data is empty: nothing to resample")
    # The same resamples as stats.bootstrap_ci(units, pooled rate), computed a block at a time
    # with array sums instead of one Python call per resample (50,000 interrogators: seconds).
    level = stats.check_open_unit("level", level)
    rates = np.concatenate(
        [
            wins[rows].sum(axis=1) / games[rows].sum(axis=1)
            for rows in stats.bootstrap_draws(len(wins), n_boot, seed)
        ]
    )
    return stats.percentile_interval(rates, level)


def _corrected(family: list[WinRate], corrections: Sequence[Correction]) -> list[WinRate]:
    if not family:
        return family
    adjusted: list[dict[str, float]] = [{} for _ in family]
    for direction in ("greater", "less"):
        raw = [getattr(r, f"p_{direction}") for r in family]
        for method in corrections:
            for slot, value in zip(adjusted, stats.adjust_pvalues(raw, method=method), strict=True):
                slot[f"{direction}_{method.replace('-', '_')}"] = float(value)
    return [WinRate(**{**asdict(r), "adjusted": a}) for r, a in zip(family, adjusted, strict=True)]

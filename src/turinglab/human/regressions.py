"""Logistic regressions of the three-party study (Jones & Bergen 2025; SPEC §2) on the study table.

All models are fitted to AI-witness rows unless said otherwise; the response is the verdict on
that AI witness: `judged_human` (its win) or its complement, the interrogator's accuracy.

* `witness_vs_baseline` — judged_human ~ witness (treatment coding, baseline = ELIZA): the
  log-odds difference of each witness from the baseline, with Wald z and p.
* `intercept_only` — the Wald z of an intercept-only logit model of one witness's win rate (or
  accuracy) against chance: z = (logit p̂ − logit c) · √(n p̂ (1 − p̂)).
* `persona_mixed_model` — judged_human ~ persona + (1 | model) + (1 | interrogator), a logistic
  GLMM fitted by the Laplace approximation (turinglab.analysis.glmm).
* `trial_order_effect` — judged_human ~ round (optionally + witness): a negative slope means
  interrogators get more accurate with practice.
* `survey_regressions` — accuracy ~ one exit-survey variable at a time (numeric: continuous;
  otherwise categorical with the most frequent level as reference), one p per variable (numeric:
  Wald p of the slope; categorical: likelihood-ratio test against the intercept-only model) and
  Benjamini–Hochberg adjustment across variables (turinglab.analysis.stats.adjust_pvalues).

Fixed-effect models (statsmodels Logit) treat an interrogator's games as independent; only the
persona model has random effects. `all_regressions` runs what the data allow and lists the rest
as skipped, with the reason.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import statsmodels.api as sm
from scipy import stats as scipy_stats

from turinglab.analysis import stats
from turinglab.analysis.errors import NotEnoughData
from turinglab.analysis.glmm import fit_logistic_glmm

REQUIRED = ("witness", "witness_type", "judged_human")
LOGIT_METHOD = "logistic regression (ML, statsmodels Logit), Wald z"
GLMM_METHOD = "logistic mixed model (ML, Laplace approximation), Wald z"


class AnalysisSkipped(NotEnoughData, ValueError):
    """The data do not support this analysis; the message says why. (A ValueError too, for
    callers written before NotEnoughData.)"""


@dataclass(frozen=True)
class RegressionTerm:
    term: str
    estimate: float  # log-odds scale
    se: float
    z: float
    p: float  # two-sided
    n: int
    method: str

    def ci(self, level: float = 0.95) -> tuple[float, float]:
        """Wald confidence interval on the log-odds scale."""
        half = float(scipy_stats.norm.ppf(0.5 + level / 2)) * self.se
        return self.estimate - half, self.estimate + half


@dataclass(frozen=True)
class RegressionResult:
    analysis: str
    formula: str
    method: str
    n: int
    terms: tuple[RegressionTerm, ...]
    random_sd: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    def term(self, name: str) -> RegressionTerm:
        for t in self.terms:
            if t.term == name:
                return t
        raise KeyError(
            f"no term {name!r} in {self.analysis} (terms: {[t.term for t in self.terms]})"
        )

    def summary(self) -> str:
        lines = [f"{self.analysis}: {self.formula}  [{self.method}; n = {self.n}]"]
        lines += [
            f"  {t.term:<28}{t.estimate:>9.3f} (SE {t.se:.3f})  z = {t.z:>7.3f}  p = {t.p:.3g}"
            for t in self.terms
        ]
        if self.random_sd:
            sds = ", ".join(f"{k} {v:.3f}" for k, v in self.random_sd.items())
            lines.append(f"  random-intercept SDs: {sds}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


@dataclass(frozen=True)
class SurveyVariableResult:
    variable: str
    kind: str  # "numeric" or "categorical"
    reference: str | None  # reference level of a categorical variable
    p_value: float  # numeric: Wald p of the slope; categorical: likelihood-ratio p
    p_adjusted: float  # Benjamini–Hochberg across the variables tested
    result: RegressionResult


@dataclass(frozen=True)
class SurveyRegressions:
    variables: tuple[SurveyVariableResult, ...]
    adjustment: str
    skipped: dict[str, str]

    def summary(self) -> str:
        lines = [f"survey_regressions: accuracy ~ each survey variable [{LOGIT_METHOD}]"]
        lines += [
            f"  {v.variable:<28}{v.kind:<12} n = {v.result.n:<6} p = {v.p_value:.3g}  "
            f"p_adj = {v.p_adjusted:.3g}"
            for v in self.variables
        ]
        lines.append(f"  adjustment: {self.adjustment}")
        lines += [f"  skipped {k}: {why}" for k, why in self.skipped.items()]
        return "\n".join(lines)


@dataclass(frozen=True)
class RegressionReport:
    results: dict[str, RegressionResult | SurveyRegressions]
    skipped: dict[str, str]

    def summary(self) -> str:
        parts = [r.summary() for r in self.results.values()]
        parts += [f"skipped {name}: {why}" for name, why in self.skipped.items()]
        return "\n\n".join(parts)


# ---------------------------------------------------------------- helpers


def _check_columns(df: pd.DataFrame, columns: tuple[str, ...], analysis: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"{analysis}: the study table lacks column(s) {missing}")


def _verdict_value(value: object) -> float:
    if isinstance(value, bool | np.bool_):
        return float(value)
    if isinstance(value, int | float | np.integer | np.floating) and value in (0, 1):
        return float(value)
    return math.nan


def _verdicts(values: pd.Series) -> pd.Series:
    """judged_human as 0/1 floats; a value that is not boolean-like is an error."""
    mapped = values.map(_verdict_value).astype(float)
    if mapped.isna().any():
        bad = values[mapped.isna()].iloc[0]
        raise ValueError(f"judged_human must be true/false for every row, found {bad!r}")
    return mapped


def _ai_rows(df: pd.DataFrame, analysis: str) -> pd.DataFrame:
    _check_columns(df, REQUIRED, analysis)
    ai = df[df["witness_type"] == "ai"]
    if ai.empty:
        raise AnalysisSkipped(f"{analysis}: no AI-witness rows")
    return ai


def _dummies(values: pd.Series, reference: str, prefix: str = "") -> pd.DataFrame:
    levels = sorted({str(v) for v in values} - {reference})
    as_text = values.astype(str)
    return pd.DataFrame(
        {f"{prefix}{lvl}": (as_text == lvl).astype(float) for lvl in levels}, index=values.index
    )


def _most_frequent(values: pd.Series) -> str:
    counts = values.astype(str).value_counts()
    return str(sorted(counts[counts == counts.max()].index)[0])


# Past these a logit estimate is running off to infinity rather than converging: a coefficient
# of 15 is an odds ratio of 3 million, and a standard error of 50 a useless one.
_DIVERGED_ESTIMATE = 15.0
_DIVERGED_SE = 50.0


class NotEstimable(AnalysisSkipped):
    """The maximum-likelihood estimate does not exist (complete or quasi-complete separation)."""


def separated_cell(design: pd.DataFrame, y: pd.Series | np.ndarray) -> str | None:
    """Why a logit model of `y` on `design` has no finite ML estimate, or None. Where every
    column is an indicator (0/1), the design's distinct rows are cells that each get their own
    log-odds: a cell whose verdicts all go one way has log-odds ±∞ (complete separation)."""
    values = design.to_numpy(dtype=float)
    if not np.isin(values, (0.0, 1.0)).all():
        return None  # a continuous covariate: only the fit can tell (see _diverged)
    outcome = np.asarray(y, dtype=float)
    for cell in np.unique(values, axis=0):
        rows = (values == cell).all(axis=1)
        k, n = int(outcome[rows].sum()), int(rows.sum())
        if k in (0, n):
            named = [
                str(c)
                for c, v in zip(design.columns, cell, strict=True)
                if v and c not in ("const", "(Intercept)")
            ]
            where = " & ".join(named) or "the reference level"
            way = "judged human" if k == n else "judged AI"
            return f"every game of {where} was {way} ({k}/{n}), so its log-odds is infinite"
    return None


def _diverged(terms: tuple[RegressionTerm, ...]) -> str | None:
    for t in terms:
        if not (math.isfinite(t.estimate) and math.isfinite(t.se)):
            return f"{t.term}: estimate {t.estimate}, SE {t.se}"
        if abs(t.estimate) > _DIVERGED_ESTIMATE or t.se > _DIVERGED_SE:
            return f"{t.term}: log-odds {t.estimate:+.1f} with SE {t.se:,.0f} (the fit diverged)"
    return None


def _not_estimable(analysis: str, reason: str) -> NotEstimable:
    return NotEstimable(f"{analysis}: not estimable (complete separation): {reason}")


def _fit_logit(
    y: pd.Series, design: pd.DataFrame, analysis: str, formula: str, notes: list[str]
) -> tuple[RegressionResult, object]:
    if y.nunique() < 2:
        raise AnalysisSkipped(f"{analysis}: the response has only one value among {len(y)} rows")
    separated = separated_cell(design, y)
    if separated:
        raise _not_estimable(analysis, separated)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            fit = sm.Logit(y, design).fit(method="newton", disp=0, maxiter=100)
        except np.linalg.LinAlgError as err:
            raise AnalysisSkipped(f"{analysis}: singular design ({err})") from None
    if any("separation" in str(w.message).lower() for w in caught):
        notes.append("(quasi-)perfect separation: some estimates are unreliable")
    if not fit.mle_retvals.get("converged", True):
        notes.append("the Logit fit did not converge")
    terms = tuple(
        RegressionTerm(
            term="(Intercept)" if name == "const" else str(name),
            estimate=float(fit.params[name]),
            se=float(fit.bse[name]),
            z=float(fit.tvalues[name]),
            p=float(fit.pvalues[name]),
            n=len(y),
            method=LOGIT_METHOD,
        )
        for name in design.columns
    )
    diverged = _diverged(terms)
    if diverged:
        raise _not_estimable(analysis, diverged)
    return RegressionResult(analysis, formula, LOGIT_METHOD, len(y), terms, notes=tuple(notes)), fit


# ---------------------------------------------------------------- analyses


def witness_vs_baseline(df: pd.DataFrame, baseline: str = "ELIZA") -> RegressionResult:
    """judged_human ~ witness among AI rows; the terms are log-odds differences from `baseline`."""
    name = "witness_vs_baseline"
    ai = _ai_rows(df, name)
    if baseline not in set(ai["witness"]):
        raise AnalysisSkipped(f"{name}: baseline witness {baseline!r} has no AI rows")
    if ai["witness"].nunique() < 2:
        raise AnalysisSkipped(f"{name}: only the baseline witness is present")
    design = sm.add_constant(_dummies(ai["witness"], baseline), has_constant="add")
    result, _ = _fit_logit(
        _verdicts(ai["judged_human"]),
        design,
        name,
        f"judged_human ~ witness (reference {baseline})",
        [],
    )
    return result


def intercept_only(
    df: pd.DataFrame, witness: str, outcome: str = "win_rate", chance: float = 0.5
) -> RegressionTerm:
    """Wald test of an intercept-only logit model for one witness's win rate (judged_human) or
    accuracy (the verdict was right) against `chance`; estimate = logit p̂, z = (β̂ − logit c)/SE."""
    _check_columns(df, REQUIRED, "intercept_only")
    if outcome not in ("win_rate", "accuracy"):
        raise ValueError(f"outcome must be 'win_rate' or 'accuracy', not {outcome!r}")
    if not 0 < chance < 1:
        raise ValueError(f"chance must be strictly between 0 and 1, not {chance}")
    rows = df[df["witness"] == witness]
    if rows.empty:
        raise AnalysisSkipped(f"intercept_only: witness {witness!r} has no rows")
    y = _verdicts(rows["judged_human"])
    if outcome == "accuracy":
        y = y.where(rows["witness_type"] == "human", 1.0 - y)
    k, n = int(y.sum()), len(y)
    if k in (0, n):
        raise AnalysisSkipped(
            f"intercept_only: {witness!r} has {k}/{n} — the log-odds estimate is infinite and the "
            "Wald z undefined; use the exact binomial test"
        )
    fit = sm.Logit(y, np.ones((n, 1))).fit(method="newton", disp=0)
    beta, se = float(fit.params.iloc[0]), float(fit.bse.iloc[0])
    z = (beta - math.log(chance / (1 - chance))) / se
    return RegressionTerm(
        term=f"{witness} {outcome} (intercept, vs chance {chance:g})",
        estimate=beta,
        se=se,
        z=z,
        p=float(2 * scipy_stats.norm.sf(abs(z))),
        n=n,
        method=LOGIT_METHOD,
    )


def persona_mixed_model(df: pd.DataFrame, reference: str | None = None) -> RegressionResult:
    """judged_human ~ persona + (1 | model) + (1 | interrogator) among AI rows (Laplace GLMM).
    The reference persona is "NO-PERSONA" when present, else the most frequent level."""
    name = "persona_mixed_model"
    ai = _ai_rows(df, name)
    absent = [c for c in ("persona", "model", "interrogator") if c not in ai.columns]
    if absent:
        raise AnalysisSkipped(f"{name}: the study table has no {absent} column(s)")
    rows = ai.dropna(subset=["persona", "model", "interrogator"])
    if rows["persona"].nunique() < 2:
        raise AnalysisSkipped(f"{name}: needs at least two persona conditions among AI rows")
    if rows["model"].nunique() < 2:
        raise AnalysisSkipped(f"{name}: needs at least two models for a (1 | model) term")
    levels = set(rows["persona"].astype(str))
    ref = reference or ("NO-PERSONA" if "NO-PERSONA" in levels else _most_frequent(rows["persona"]))
    if ref not in levels:
        raise ValueError(f"{name}: reference persona {ref!r} not among {sorted(levels)}")
    design = pd.concat(
        [
            pd.Series(1.0, index=rows.index, name="(Intercept)"),
            _dummies(rows["persona"], ref, prefix="persona "),
        ],
        axis=1,
    )
    verdicts = _verdicts(rows["judged_human"])
    separated = separated_cell(design, verdicts)
    if separated:
        raise _not_estimable(name, separated)
    fit = fit_logistic_glmm(
        design,
        verdicts.to_numpy(),
        {
            "model": rows["model"].astype(str).to_numpy(),
            "interrogator": rows["interrogator"].astype(str).to_numpy(),
        },
    )
    method = GLMM_METHOD if fit.method == "Laplace" else GLMM_METHOD.replace("Laplace", fit.method)
    terms = tuple(
        RegressionTerm(t, e, s, z, p, fit.n_obs, method)
        for t, e, s, z, p in zip(
            fit.coef_names, fit.estimates, fit.std_errors, fit.z_values, fit.p_values, strict=True
        )
    )
    diverged = _diverged(terms)
    if diverged:
        raise _not_estimable(name, diverged)
    notes = [f"groups: {fit.n_groups}", f"log-likelihood {fit.log_likelihood:.3f}", *fit.messages]
    if not fit.converged:
        notes.append("the GLMM optimiser did not converge")
    return RegressionResult(
        name,
        f"judged_human ~ persona (reference {ref}) + (1 | model) + (1 | interrogator)",
        method,
        fit.n_obs,
        terms,
        random_sd=dict(fit.random_sd),
        notes=tuple(notes),
    )


def trial_order_effect(df: pd.DataFrame, with_witness: bool = False) -> RegressionResult:
    """judged_human ~ round [+ witness] among AI rows. The `round` term is the change in the
    log-odds of being judged human per round; accuracy's slope is its negative."""
    name = "trial_order_effect"
    ai = _ai_rows(df, name)
    if "round" not in ai.columns:
        raise AnalysisSkipped(f"{name}: the study table has no 'round' column")
    rows = ai[pd.to_numeric(ai["round"], errors="coerce").notna()]
    rounds = pd.to_numeric(rows["round"]).astype(float)
    if rounds.nunique() < 2:
        raise AnalysisSkipped(f"{name}: needs at least two distinct rounds")
    parts = [pd.Series(1.0, index=rows.index, name="const"), rounds.rename("round")]
    formula = "judged_human ~ round"
    if with_witness and rows["witness"].nunique() > 1:
        ref = _most_frequent(rows["witness"])
        parts.append(_dummies(rows["witness"], ref, prefix="witness "))
        formula += f" + witness (reference {ref})"
    result, _ = _fit_logit(
        _verdicts(rows["judged_human"]), pd.concat(parts, axis=1), name, formula, []
    )
    return result


def survey_regressions(df: pd.DataFrame) -> SurveyRegressions:
    """accuracy ~ v for every survey_* column v, separately, with BH-adjusted p-values."""
    name = "survey_regressions"
    ai = _ai_rows(df, name)
    columns = [c for c in ai.columns if str(c).startswith("survey_")]
    if not columns:
        raise AnalysisSkipped(f"{name}: the study table has no survey_* columns")
    accuracy = 1.0 - _verdicts(ai["judged_human"])
    fitted: list[tuple[str, str, str | None, float, RegressionResult]] = []
    skipped: dict[str, str] = {}
    for column in columns:
        values = ai[column].dropna()
        if values.nunique() < 2:
            skipped[column] = "fewer than two distinct answers"
            continue
        numeric = pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values)
        if numeric:
            design = pd.concat(
                [
                    pd.Series(1.0, index=values.index, name="const"),
                    values.astype(float).rename(column),
                ],
                axis=1,
            )
            ref, formula = None, f"accuracy ~ {column} (continuous)"
        else:
            ref = _most_frequent(values)
            design = pd.concat(
                [
                    pd.Series(1.0, index=values.index, name="const"),
                    _dummies(values, ref, prefix=f"{column}="),
                ],
                axis=1,
            )
            formula = f"accuracy ~ {column} (categorical, reference {ref})"
        try:
            result, fit = _fit_logit(accuracy[values.index], design, column, formula, [])
        except AnalysisSkipped as err:
            skipped[column] = str(err)
            continue
        p = result.term(column).p if numeric else float(fit.llr_pvalue)  # type: ignore[attr-defined]
        fitted.append((column, "numeric" if numeric else "categorical", ref, p, result))
    if not fitted:
        raise AnalysisSkipped(f"{name}: no survey variable could be fitted ({skipped})")
    adjusted = stats.adjust_pvalues([f[3] for f in fitted], method="fdr_bh")
    return SurveyRegressions(
        variables=tuple(
            SurveyVariableResult(col, kind, ref, p, float(p_adj), res)
            for (col, kind, ref, p, res), p_adj in zip(fitted, adjusted, strict=True)
        ),
        adjustment="Benjamini–Hochberg (turinglab.analysis.stats.adjust_pvalues, fdr_bh)",
        skipped=skipped,
    )


def all_regressions(df: pd.DataFrame, baseline: str = "ELIZA") -> RegressionReport:
    """Run every regression the table allows; the rest are listed in `skipped` with the reason."""
    _check_columns(df, REQUIRED, "all_regressions")
    results: dict[str, RegressionResult | SurveyRegressions] = {}
    skipped: dict[str, str] = {}

    def attempt(key: str, run: object) -> None:
        try:
            results[key] = run()  # type: ignore[operator]
        except AnalysisSkipped as err:
            skipped[key] = str(err)

    attempt("witness_vs_baseline", lambda: witness_vs_baseline(df, baseline))
    attempt("persona_mixed_model", lambda: persona_mixed_model(df))
    attempt("trial_order_effect", lambda: trial_order_effect(df))
    attempt("survey_regressions", lambda: survey_regressions(df))
    for witness in sorted(set(df.loc[df["witness_type"] == "ai", "witness"].astype(str))):
        try:
            term = intercept_only(df, witness)
        except AnalysisSkipped as err:
            skipped[f"intercept_only:{witness}"] = str(err)
            continue
        results[f"intercept_only:{witness}"] = RegressionResult(
            "intercept_only", f"judged_human ~ 1 ({witness})", term.method, term.n, (term,)
        )
    return RegressionReport(results, skipped)

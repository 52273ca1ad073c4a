"""Which judge demographics a two-way ANOVA of judge accuracy can use (the paper compared
judges by gender and by education): two columns with at least two levels each among the judges.

Columns are chosen by the researcher, or found among the common ones in a fixed order. A
numeric `age` (the judging page asks for it) is grouped into `age_group` bands first, because
an ANOVA factor needs a few levels, not one per year of age.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from turinglab.itt.judgements import JudgementRow

COMMON_FACTORS = ("gender", "age_group", "education", "english")
AGE_BANDS = ((18, 29), (30, 44), (45, 59))  # and 60+


def age_group(age: str) -> str | None:
    try:
        years = int(float(age))
    except ValueError:
        return None
    for low, high in AGE_BANDS:
        if low <= years <= high:
            return f"{low}-{high}"
    return "60+" if years >= 60 else None


def with_age_groups(rows: Sequence[JudgementRow]) -> list[JudgementRow]:
    """Rows with an `age_group` column from `age` where they have an age and no group."""
    out = []
    for r in rows:
        d = r.demographics
        group = age_group(d["age"]) if "age" in d and "age_group" not in d else None
        out.append(r.model_validate({**r.model_dump(), "age_group": group}) if group else r)
    return out


def judge_levels(rows: Sequence[JudgementRow]) -> dict[str, set[str]]:
    """Demographic column -> the distinct values among the judges who have it."""
    levels: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        for column, value in r.demographics.items():
            if value not in ("", "None"):
                levels[column].add(value)
    return dict(levels)


def anova_factors(
    rows: Sequence[JudgementRow], given: Sequence[str] | None = None
) -> tuple[str, str] | str:
    """The two columns to use, or the reason there are none (said in the report)."""
    levels = judge_levels(rows)
    if given:
        if len(given) != 2:
            return f"a two-way ANOVA takes two columns, {len(given)} were named"
        short = [c for c in given if len(levels.get(c, ())) < 2]
        if short:
            return f"the judges show fewer than two levels of {', '.join(map(repr, short))}"
        return given[0], given[1]
    usable = [c for c in COMMON_FACTORS if len(levels.get(c, ())) >= 2]
    if len(usable) < 2:
        found = ", ".join(f"{c} ({len(levels.get(c, ()))})" for c in COMMON_FACTORS)
        return (
            "needs two demographic columns with at least two levels each among the judges; "
            f"levels found: {found}"
        )
    return usable[0], usable[1]

"""`turinglab stats …`: the statistics calculator on the command line (a typer sub-app).

Thin: it parses, calls turinglab.analysis.stats / humanness, and prints text or one JSON object.
"""

from __future__ import annotations

import json
import math
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from turinglab.analysis.humanness import TwoPartyHumanness

stats_app = typer.Typer(
    help="Statistics calculator: exact binomial tests and intervals, adjusted p-values, "
    "Giunti's degree of humanness.",
    no_args_is_help=True,
    add_completion=False,
)

JsonOption = Annotated[bool, typer.Option("--json", help="print one JSON object")]


class AdjustChoice(StrEnum):
    bonferroni = "bonferroni"
    reverse_bonferroni = "reverse-bonferroni"
    holm = "holm"
    fdr_bh = "fdr_bh"


class Design(StrEnum):
    three_party = "three-party"
    two_party = "two-party"


def _fail(message: str) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code=2)


def _emit_json(payload: dict[str, Any]) -> None:
    typer.echo(json.dumps(_json_safe(payload), indent=2, allow_nan=False))


def _json_safe(value: Any) -> Any:
    """Tuples to lists; NaN and ±inf (no JSON form) to None."""
    if isinstance(value, dict):
        return {key: _json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe(item) for item in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _num(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "undefined"
    if math.isinf(value):
        return "inf"
    if value != 0 and abs(value) < 10 ** (-digits):
        return f"{value:.3g}"
    return f"{value:.{digits}f}"


# Below this a double has lost its precision (subnormal) or underflowed to 0; every p-value that
# small prints the same way, whichever test produced it.
_TINY_P = 1e-300


def _p(value: float | None) -> str:
    """A p-value: 4 decimals, 3 significant digits below 0.0001, and "< 1e-300" for the
    values a double cannot hold (0.0 included: it means "underflowed", never "impossible")."""
    if value is None or math.isnan(value):
        return "undefined"
    if value < _TINY_P:
        return f"< {_TINY_P:g}"
    return _num(value)


def _interval(bounds: tuple[float, float] | None) -> str:
    return "undefined" if bounds is None else f"[{_num(bounds[0])}, {_num(bounds[1])}]"


def _union(parts: list[tuple[float, float]]) -> str:
    return " ∪ ".join(_interval(part) for part in parts)


@stats_app.command()
def binomial(
    successes: Annotated[int, typer.Option("--successes", "-k", help="successes K")],
    trials: Annotated[int, typer.Option("--trials", "-n", help="trials N")],
    chance: Annotated[float, typer.Option(help="success probability under H0")] = 0.5,
    alpha: Annotated[float, typer.Option(help="significance level; intervals at 1 − alpha")] = 0.05,
    as_json: JsonOption = False,
) -> None:
    """Exact and Wald tests of K/N against chance, five intervals, and the compatible p."""
    from turinglab.analysis import stats
    from turinglab.analysis.binomial import check_size

    try:
        check_size(trials, "--trials")
        summary = stats.binomial_summary(successes, trials, chance=chance, alpha=alpha)
    except ValueError as err:
        raise _fail(str(err)) from None
    if as_json:
        _emit_json(summary.to_dict())
        return
    wald = summary.wald
    level = f"{100 * (1 - alpha):g}%"
    lines = [
        f"{successes}/{trials} successes: p̂ = {_num(summary.proportion)}; chance = {chance:g}",
        "Exact binomial test (two-sided: sum of all counts as or less probable than K)",
        f"  p two-sided  {_p(summary.p_two_sided)}",
        f"  p greater    {_p(summary.p_greater)}   (H1: p > {chance:g})",
        f"  p less       {_p(summary.p_less)}   (H1: p < {chance:g})",
        "Wald z of an intercept-only logistic regression (log-odds vs logit(chance))",
    ]
    if wald.z is None:
        lines.append(f"  {wald.note}")
    else:
        lines += [
            f"  z = {wald.z:.3f}",
            f"  p two-sided  {_p(wald.p_two_sided)}",
            f"  p greater    {_p(wald.p_greater)}",
            f"  p less       {_p(wald.p_less)}",
        ]
    lines.append(f"{level} confidence intervals")
    lines += [f"  {method:<16} {_interval(bounds)}" for method, bounds in summary.ci.items()]
    lines.append(
        f"Compatible p (exact two-sided test not significant at {alpha:g}): "
        f"{_union(summary.compatible_p_intervals)}"
    )
    typer.echo("\n".join(lines))


# "stats adjust 0.01 -0.2": a p-value that looks like an option must still reach the range check
# (which then says what is wrong) rather than fail as "No such option: -0".
@stats_app.command(context_settings={"ignore_unknown_options": True})
def adjust(
    pvalues: Annotated[list[float], typer.Argument(metavar="P...", help="p-values of the family")],
    method: Annotated[AdjustChoice, typer.Option(help="adjustment")] = AdjustChoice.holm,
    as_json: JsonOption = False,
) -> None:
    """Adjust a family of p-values (reverse Bonferroni: p / family size, as in Jones & Bergen)."""
    from turinglab.analysis import stats

    try:
        adjusted = stats.adjust_pvalues(pvalues, method=method.value)
    except ValueError as err:
        raise _fail(str(err)) from None
    if as_json:
        _emit_json({"method": method.value, "pvalues": pvalues, "adjusted": adjusted})
        return
    typer.echo(f"{'p':>10}  {method.value}")
    for raw, new in zip(pvalues, adjusted, strict=True):
        typer.echo(f"{_p(raw):>10}  {_p(new)}")


@stats_app.command()
def humanness(
    design: Annotated[Design, typer.Option(help="three-party or two-party test")],
    machine_judged_human: Annotated[
        int, typer.Option(help="games in which the machine was judged human")
    ],
    games: Annotated[int | None, typer.Option(help="three-party: games played")] = None,
    machine_games: Annotated[int | None, typer.Option(help="two-party: machine games")] = None,
    human_judged_human: Annotated[
        int | None, typer.Option(help="two-party: games in which the human was judged human")
    ] = None,
    human_games: Annotated[int | None, typer.Option(help="two-party: human games")] = None,
    as_json: JsonOption = False,
) -> None:
    """Giunti's degree of humanness, its compatible range and the pass criteria."""
    from turinglab.analysis.humanness import three_party_humanness, two_party_humanness

    # A flag the design does not use is an error, not silently ignored.
    foreign = (
        [
            flag
            for flag, value in (
                ("--machine-games", machine_games),
                ("--human-judged-human", human_judged_human),
                ("--human-games", human_games),
            )
            if value is not None
        ]
        if design is Design.three_party
        else (["--games"] if games is not None else [])
    )
    if foreign:
        other = "two-party" if design is Design.three_party else "three-party"
        raise _fail(
            f"--design {design.value} does not use {', '.join(foreign)} (a {other} flag); "
            "drop it or change --design"
        )
    from turinglab.analysis.binomial import check_size

    try:
        for flag, count in (("--games", games), ("--machine-games", machine_games)):
            if count is not None:
                check_size(count, flag)
        if human_games is not None:
            check_size(human_games, "--human-games")
        if design is Design.three_party:
            if games is None:
                raise ValueError("--design three-party needs --games")
            three = three_party_humanness(machine_judged_human, games)
            payload, text = three.to_dict(), _three_party_text(three)
        else:
            missing = [
                name
                for name, value in (
                    ("--machine-games", machine_games),
                    ("--human-judged-human", human_judged_human),
                    ("--human-games", human_games),
                )
                if value is None
            ]
            if missing:
                raise ValueError(f"--design two-party needs {', '.join(missing)}")
            assert machine_games is not None and human_judged_human is not None
            assert human_games is not None
            two = two_party_humanness(
                machine_judged_human, machine_games, human_judged_human, human_games
            )
            payload, text = two.to_dict(), _two_party_text(two)
    except ValueError as err:
        raise _fail(_flag_names(str(err))) from None
    if as_json:
        _emit_json(payload)
    else:
        typer.echo(text)


_FLAGS = {
    "machine_judged_human": "--machine-judged-human",
    "human_judged_human": "--human-judged-human",
    "machine_games": "--machine-games",
    "human_games": "--human-games",
    "games": "--games",
}


def _flag_names(message: str) -> str:
    """The analysis names its arguments; the user typed flags: say those."""
    import re

    return re.sub(
        r"(?<![\w-])(" + "|".join(sorted(_FLAGS, key=len, reverse=True)) + r")(?![\w-])",
        lambda m: _FLAGS[m.group(1)],
        message,
    )


def _yes(flag: bool | None) -> str:
    return "undefined" if flag is None else ("yes" if flag else "no")


def _three_party_text(result: Any) -> str:
    lines = [
        f"Three-party test: machine judged human in {result.machine_judged_human} of "
        f"{result.games} games (rate {_num(result.rate)})",
        f"Degree of humanness (rate ÷ 0.5): {_num(result.humanness, 3)}",
        f"Exact two-sided test of rate = 0.5: p = {_p(result.p_value_vs_half)}",
        f"Turing's benchmark (30% misidentification = humanness 0.6) reached by the estimate: "
        f"{_yes(result.meets_turing_benchmark)}",
    ]
    for level in result.levels:
        lines += [
            f"At alpha = {level.alpha:g}:",
            f"  compatible range of the rate: {_union(level.rate_intervals)}",
            f"  compatible range of humanness: {_interval(level.humanness_range)}",
            f"  absolute criterion (0.5 compatible): {_yes(level.absolute_criterion_compatible)}",
            f"  Turing's benchmark (0.3 compatible): {_yes(level.turing_benchmark_compatible)}",
        ]
    return "\n".join(lines)


def _two_party_text(result: TwoPartyHumanness) -> str:
    lines = [
        f"Two-party test: machine judged human in {result.machine_judged_human} of "
        f"{result.machine_games} games (rate {_num(result.machine_rate)}); human judged human "
        f"in {result.human_judged_human} of {result.human_games} (rate {_num(result.human_rate)})",
        f"Degree of humanness (machine rate ÷ human rate): {_num(result.humanness, 3)}",
        f"Machine rate = human rate, Fisher's exact test: p = {_p(result.fisher_p_two_sided)}; "
        f"Boschloo's exact test: p = {_p(result.boschloo_p_two_sided)}",
        f"Turing's benchmark (humanness 0.6) reached by the estimate: "
        f"{_yes(result.meets_turing_benchmark)}",
    ]
    for level in result.levels:
        lines += [
            f"At alpha = {level.alpha:g}:",
            f"  compatible range of the machine rate: {_interval(level.machine_rate_range)}",
            "  humanness, machine range ÷ observed human rate: "
            f"{_interval(level.humanness_fixed_human_rate)}",
            f"  humanness, Koopman score interval of the ratio: "
            f"{_interval(level.humanness_koopman)}",
            "  absolute criterion (rates compatible, Fisher): "
            f"{_yes(level.absolute_criterion_compatible)}",
            f"  Turing's benchmark (0.6 in the Koopman interval): "
            f"{_yes(level.turing_benchmark_compatible)}",
        ]
    lines += [f"Note: {note}" for note in result.notes]
    return "\n".join(lines)

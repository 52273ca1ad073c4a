"""Strong Turing Test: ties as half-wins, head-to-head, AGI/ASI verdicts, loader errors."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from scipy.stats import beta, binom

from turinglab.human.simulate import simulate_stt
from turinglab.human.strong import (
    half_win_ci,
    half_win_tests,
    load_stt,
    stt_frame,
    stt_scores,
    stt_verdicts,
    validate_stt,
)


def turns(choices: list[str], sides: str = "S;h1", session: str = "a") -> pd.DataFrame:
    return validate_stt(
        pd.DataFrame(
            [
                {
                    "session": session,
                    "turn": t,
                    "investigator": "inv",
                    "system": "S",
                    "choice": c,
                    "sides": sides,
                }
                for t, c in enumerate(choices, start=1)
            ]
        )
    )


def cp_low(k: int, n: int) -> float:
    return 0.0 if k == 0 else float(beta.ppf(0.025, k, n - k + 1))


def cp_high(k: int, n: int) -> float:
    return 1.0 if k == n else float(beta.ppf(0.975, k + 1, n - k))


def test_ties_count_half_and_conservative_ci() -> None:
    table = turns(["S", "S", "S", "tie", "h1", "h1"])  # 3 wins, 1 tie, 2 losses → 3.5/6
    scores = {(s.side, s.opponent): s for s in stt_scores(table)}
    panel = scores[("S", "panel")]
    assert (panel.turns, panel.wins, panel.ties) == (6, 3, 1)
    assert panel.win_rate == pytest.approx(3.5 / 6)
    assert panel.ci_low == pytest.approx(cp_low(3, 6)) and panel.ci_high == pytest.approx(
        cp_high(4, 6)
    )
    human = scores[("h1", "")]
    assert human.win_rate == pytest.approx(2.5 / 6)
    # an even number of ties needs no rounding
    assert half_win_ci(3, 2, 6) == pytest.approx((cp_low(4, 6), cp_high(4, 6)))


def test_half_win_tests_round_conservatively() -> None:
    greater, less = half_win_tests(wins=14, ties=1, n=20, threshold=0.5)  # score 14.5
    assert greater == pytest.approx(binom.sf(13, 20, 0.5))  # uses 14
    assert less == pytest.approx(binom.cdf(15, 20, 0.5))  # uses 15


def test_head_to_head_drops_turns_won_by_a_third_side() -> None:
    rows = []
    for t, (choice, sides) in enumerate(
        [("S", "S;h1;h2"), ("h2", "S;h1;h2"), ("h1", "S;h1;h2"), ("tie", "S;h1"), ("S", "S;h2")],
        start=1,
    ):
        rows.append(
            {
                "session": "x",
                "turn": t,
                "investigator": "inv",
                "system": "S",
                "choice": choice,
                "sides": sides,
            }
        )
    scores = {(s.side, s.opponent): s for s in stt_scores(validate_stt(pd.DataFrame(rows)))}
    vs_h1 = scores[("S", "h1")]
    # turns with h1: 1 (S), 2 (h2 won → dropped), 3 (h1), 4 (tie) → 1 win, 1 tie of 3
    assert (vs_h1.turns, vs_h1.wins, vs_h1.ties, vs_h1.dropped) == (3, 1, 1, 1)
    assert vs_h1.win_rate == pytest.approx(0.5)
    assert scores[("S", "panel")].win_rate == pytest.approx(2.5 / 5)
    vs_h2 = scores[("S", "h2")]  # turns 1 (S), 2 (h2), 3 (h1 won → dropped), 5 (S)
    assert (vs_h2.turns, vs_h2.wins, vs_h2.dropped) == (3, 2, 1)
    assert (scores[("h2", "")].turns, scores[("h2", "")].wins) == (4, 1)


def test_agi_and_asi_verdicts() -> None:
    strong = turns(["S"] * 18 + ["h1"] * 2)
    verdicts = {(v.opponent, v.label): v for v in stt_verdicts(strong, alpha=0.05)}
    assert verdicts[("panel", "AGI")].verdict == "reached"  # P(X ≥ 18 | ½) ≈ 0.0002
    assert verdicts[("panel", "AGI")].p_greater == pytest.approx(binom.sf(17, 20, 0.5))
    assert verdicts[("panel", "ASI")].verdict == "undecided"  # 0.9 vs 0.95 with 20 turns
    assert verdicts[("h1", "AGI")].verdict == "reached"
    perfect = turns(["S"] * 20)
    asi = {(v.opponent, v.label): v for v in stt_verdicts(perfect)}[("panel", "ASI")]
    assert asi.p_greater == pytest.approx(0.95**20)  # 0.358: 20/20 is not enough for ASI
    assert asi.verdict == "undecided"
    weak = turns(["S"] * 4 + ["h1"] * 14 + ["tie"] * 2)  # score 5/20: P(X ≤ 5 | ½) ≈ 0.021
    agi = {(v.opponent, v.label): v for v in stt_verdicts(weak)}[("panel", "AGI")]
    assert agi.verdict == "not reached" and agi.p_less == pytest.approx(binom.cdf(5, 20, 0.5))
    borderline = turns(["S"] * 5 + ["h1"] * 13 + ["tie"] * 2)  # 6/20: P(X ≤ 6) ≈ 0.058
    agi = {(v.opponent, v.label): v for v in stt_verdicts(borderline)}[("panel", "AGI")]
    assert agi.verdict == "undecided"
    frame = stt_frame(stt_verdicts(weak))
    assert set(frame["label"]) == {"AGI", "ASI"}


def test_simulated_stt_recovers_score() -> None:
    """True score p_system + p_tie/2 = 0.55 lies in the 95% CI (seeded, 600 turns)."""
    table = validate_stt(simulate_stt(0.45, 0.2, n_sessions=30, turns_per_session=20, seed=9))
    panel = next(s for s in stt_scores(table) if s.opponent == "panel")
    assert panel.turns == 600 and panel.ci_low <= 0.55 <= panel.ci_high
    h2h = validate_stt(simulate_stt(0.5, 0.0, mode="head-to-head", seed=1))
    assert all(len(s.split(";")) == 2 for s in h2h["sides"])


def test_loader_errors_name_lines_and_columns(tmp_path: Path) -> None:
    path = tmp_path / "stt.csv"
    path.write_text(
        "session,turn,investigator,system,choice,sides\n"
        "a,1,inv,S,S,S;h1\n"
        "a,2,inv,S,h9,S;h1\n"
        "a,3,inv,S,tie,h1;h2\n"
        "a,3,inv,S,S,S;h1\n"
        "a,x,inv,S,S,S\n",
        encoding="utf-8",
    )
    with pytest.raises(ValueError) as err:
        load_stt(path)
    message = str(err.value)
    assert "line 3, column 'choice': 'h9' is not a side" in message
    assert "line 4, column 'sides': system 'S' not among them" in message
    assert "line 5, column 'turn': turn repeated" in message
    assert "line 6, column 'turn': not a whole number" in message
    assert "line 6, column 'sides': needs the system and at least one human" in message
    missing = tmp_path / "m.csv"
    missing.write_text("session,turn\na,1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="missing required column"):
        load_stt(missing)


def test_loader_reads_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "stt.jsonl"
    path.write_text(
        '{"session": "a", "turn": 1, "investigator": "i", "system": "S", "choice": "tie",'
        ' "sides": "S; h1"}\n',
        encoding="utf-8",
    )
    table = load_stt(path)
    assert table["sides"].iloc[0] == "S;h1" and table["turn"].iloc[0] == 1

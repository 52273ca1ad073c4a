"""The human-study HTML report: files, self-containment, escaping, and that the numbers it
shows are the right ones (checked against scipy/statsmodels and hand computations)."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binomtest
from statsmodels.stats.multitest import multipletests

from turinglab.human.exclusions import apply_exclusions
from turinglab.human.simulate import simulate_stt, simulate_study
from turinglab.report.human_report import build_study_report

RATES = {
    "GPT-4.5-PERSONA": 0.72,
    "GPT-4.5-NO-PERSONA": 0.38,
    "LLAMA-PERSONA": 0.55,
    "ELIZA": 0.22,
    "R&D<b>-NO-PERSONA": 0.3,  # a label with markup characters must come out escaped
}
STRATEGIES = ["daily-activities", "personal-details", "weather", "humour"]
REASONS = ["formality", "gut-feeling", "response-timing"]
INJECTION = "<script>window.hacked=1</script><img src=x onerror=alert(1)>"


def _study(seed: int = 3, **kwargs: object) -> pd.DataFrame:
    df = simulate_study(
        RATES,
        70,
        5,
        interrogator_sd=0.4,
        seed=seed,
        prior_rate=0.05,
        short_game_rate=0.05,
        **kwargs,  # type: ignore[arg-type]
    )
    rng = np.random.default_rng(seed)
    # Codes and reasons belong to the game (the interrogator's), so both rows get the same.
    per_game = {
        g: (
            ";".join(rng.choice(STRATEGIES, size=rng.integers(1, 3), replace=False)),
            str(rng.choice(REASONS)),
        )
        for g in df["game"].unique()
    }
    df["strategies"] = df["game"].map(lambda g: per_game[g][0])
    df["reason_codes"] = df["game"].map(lambda g: per_game[g][1])
    df["reason"] = f"they typed too fast {INJECTION}"
    df["transcript"] = [
        json.dumps(
            [
                {"sender": "interrogator", "text": f"hi {w}, see https://example.com", "t": 1.5},
                {"sender": "witness", "text": f"hey {INJECTION}", "t": 6.0},
            ]
        )
        for w in df["witness"]
    ]
    return df


class _Tables(HTMLParser):
    """Section id → list of tables → rows → cell texts; plus the plain text per section."""

    def __init__(self) -> None:
        super().__init__()
        self.sections: dict[str, list[list[list[str]]]] = {}
        self.text: dict[str, str] = {}
        self._section: str | None = None
        self._cell: list[str] | None = None
        self._skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "section":
            self._section = dict(attrs)["id"]
            self.sections[self._section] = []
            self.text[self._section] = ""
        elif tag in ("script", "svg"):
            self._skip += 1
        elif self._section and tag == "table":
            self.sections[self._section].append([])
        elif self._section and tag == "tr":
            self.sections[self._section][-1].append([])
        elif self._section and tag in ("td", "th"):
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "svg"):
            self._skip -= 1
        elif tag in ("td", "th") and self._cell is not None and self._section:
            self.sections[self._section][-1][-1].append("".join(self._cell))
            self._cell = None
        elif tag == "section":
            self._section = None

    def handle_data(self, data: str) -> None:
        if self._skip or not self._section:
            return
        self.text[self._section] += data
        if self._cell is not None:
            self._cell.append(data)


def _parse(path: Path) -> _Tables:
    parser = _Tables()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


def _row(tables: list[list[list[str]]], *cells: str) -> list[str]:
    """The first row of any table whose leading cells are `cells`."""
    for table in tables:
        for row in table:
            if row[: len(cells)] == list(cells):
                return row
    raise AssertionError(f"no row starting with {cells}")


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame, pd.DataFrame]:
    study = _study()
    stt = simulate_stt(0.5, 0.1, humans=("alice", "bob"), n_sessions=6, seed=4)
    out = tmp_path_factory.mktemp("report")
    path = build_study_report(study, out, stt=stt, seed=0)
    return path, study, stt


def test_writes_html_and_every_figure_as_png_and_svg(built) -> None:
    path, _, _ = built
    assert path.name == "report.html" and path.is_file()
    for name in (
        "win_rates_default",
        "confidence",
        "calibration",
        "trial_order",
        "humanness",
        "stt",
        "codes_strategies_people",
        "codes_reasons_people",
    ):
        png, svg = path.parent / f"{name}.png", path.parent / f"{name}.svg"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", name
        assert "<svg" in svg.read_text(encoding="utf-8")[:2000], name


def test_self_contained_and_offline(built) -> None:
    html = built[0].read_text(encoding="utf-8")
    # No attribute or CSS that makes the browser fetch anything from the network.
    assert not re.search(r"""\b(?:src|href|action|poster|srcset)\s*=\s*["']?(?:https?:)?//""", html)
    assert not re.search(r"url\(\s*['\"]?(?:https?:)?//", html)
    assert "@import" not in html and "<link" not in html and "<iframe" not in html
    # Outside the embedded data (where a transcript's own text may hold a URL), none at all.
    without_data = re.sub(r'<script type="application/json".*?</script>', "", html, flags=re.S)
    assert "http://" not in without_data and "https://" not in without_data
    assert "default-src 'none'" in html  # the page's CSP forbids fetches
    assert html.count("<svg") >= 8  # figures are inline


def test_untrusted_text_is_escaped(built) -> None:
    html = built[0].read_text(encoding="utf-8")
    assert INJECTION not in html
    assert "<img src=x" not in html
    # Exactly two script elements: the record browser's data blob and the page's own code.
    assert len(re.findall(r"<script\b", html)) == 2
    assert "R&amp;D&lt;b&gt;-NO-PERSONA" in html  # table cells are escaped
    assert "\\u003cscript\\u003e" in html  # the JSON data cannot close its script element


def test_win_rates_and_tests_match_scipy_and_statsmodels(built) -> None:
    path, study, _ = built
    kept, _ = apply_exclusions(study)
    tables = _parse(path).sections
    ai = kept[kept["witness_type"] == "ai"]
    counts = ai.groupby("witness")["judged_human"].agg(["sum", "count"])
    p_greater = {
        w: binomtest(int(k), int(n), 0.5, "greater").pvalue for w, (k, n) in counts.iterrows()
    }
    p_less = {w: binomtest(int(k), int(n), 0.5, "less").pvalue for w, (k, n) in counts.iterrows()}
    witnesses = list(counts.index)
    holm = dict(
        zip(
            witnesses,
            multipletests([p_greater[w] for w in witnesses], method="holm")[1],
            strict=True,
        )
    )
    bh_less = dict(
        zip(
            witnesses,
            multipletests([p_less[w] for w in witnesses], method="fdr_bh")[1],
            strict=True,
        )
    )
    for witness, (k, n) in counts.iterrows():
        k, n = int(k), int(n)
        ci = binomtest(k, n).proportion_ci(0.95, method="exact")
        row = _row(tables["win-rates"], witness)
        assert row[1:4] == [
            str(n),
            str(k),
            str(ai[ai["witness"] == witness]["interrogator"].nunique()),
        ]
        assert row[4] == f"{k / n:.1%}"
        assert row[5] == f"[{ci.low:.1%}, {ci.high:.1%}]"
        assert row[7] == f"{1 - k / n:.1%}"

        def shown(p: float) -> str:
            return f"{p:.1e}" if p < 1e-4 else f"{p:.4f}"

        greater = _row(tables["chance"][:1], "default", witness)
        assert greater[4].rstrip(" *") == shown(p_greater[witness])
        assert greater[5].rstrip(" *") == shown(p_greater[witness] / len(witnesses))  # p / m
        assert greater[6].rstrip(" *") == shown(holm[witness])
        assert greater[4].endswith("*") == (p_greater[witness] <= 0.05)
        less = _row(tables["chance"][1:2], "default", witness)
        assert less[4].rstrip(" *") == shown(p_less[witness])
        assert less[7].rstrip(" *") == shown(bh_less[witness])


def test_summary_counts_exclusions(built) -> None:
    path, study, _ = built
    text = _parse(path).text["summary"]
    games = study["game"].nunique()
    bad = study["prior_participation"].astype(bool) | (study["interrogator_messages"] < 2)
    dropped = study.loc[bad, "game"].nunique()
    assert f"{dropped} of {games} games" in text
    assert f"{games - dropped} games by" in text
    kept = study[~study["game"].isin(study.loc[bad, "game"])]
    assert f"by {kept['interrogator'].nunique()} interrogators" in text


def test_criteria_and_regressions_sections(built) -> None:
    path, study, _ = built
    kept, _ = apply_exclusions(study)
    parsed = _parse(path)
    eliza = kept[kept["witness"] == "ELIZA"]
    k, n = int(eliza["judged_human"].sum()), len(eliza)
    row = _row(parsed.sections["criteria"], "default", "ELIZA")
    assert row[2:5] == [str(n), str(k), f"{k / n:.1%}"]
    assert row[11] == f"{(k / n) / 0.5:.3f}"  # three-party: h = rate / 0.5
    assert "Laplace" in parsed.text["regressions"]  # the GLMM states its approximation
    assert "reference ELIZA" in parsed.text["regressions"]
    assert "judged_human ~ round" in parsed.text["trial-order"]
    assert "survey_chatbot_use" in parsed.text["survey"]
    for section, text in parsed.text.items():
        assert "Skipped" not in text, (section, text)


def test_strong_turing_test_rates_by_hand(built) -> None:
    path, _, stt = built
    row = _row(_parse(path).sections["stt"], "system", "panel")
    wins, ties = int((stt["choice"] == "system").sum()), int((stt["choice"] == "tie").sum())
    assert row[2:5] == [str(len(stt)), str(wins), str(ties)]
    assert row[6] == f"{(wins + ties / 2) / len(stt):.1%}"
    assert "ASI 95%" in _parse(path).text["stt"]


def test_game_browser_records(built) -> None:
    path, study, _ = built
    html = path.read_text(encoding="utf-8")
    blob = re.search(
        r'<script type="application/json" id="games-browser-0-data">(.*?)</script>',
        html,
        flags=re.S,
    )
    assert blob
    data = json.loads(blob.group(1))
    kept, _ = apply_exclusions(study)
    assert len(data["records"]) == kept["game"].nunique()
    record = data["records"][0]
    ai_row = kept[(kept["game"] == record["game"]) & (kept["witness_type"] == "ai")].iloc[0]
    assert record["witness"] == ai_row["witness"]
    assert record["verdict"] == ("judged human" if ai_row["judged_human"] else "judged AI")
    assert record["result"] == ("incorrect" if ai_row["judged_human"] else "correct")
    assert len(record["messages"]) == 4  # two messages with each of the two witnesses
    assert {f["key"] for f in data["spec"]["filters"]} >= {"witness", "verdict", "result"}


def test_tagger_codes_and_kappa(tmp_path: Path) -> None:
    study = _study(seed=5)
    people = study.groupby("game")["strategies"].first()
    tagger = {"strategies": {g: set(c.split(";")) for g, c in people.items()}}
    path = build_study_report(study.drop(columns=["reason_codes"]), tmp_path, tagger=tagger)
    assert (tmp_path / "codes_strategies_tagger.png").is_file()
    text = _parse(path).text["codes"]
    assert "mean over codes 1.000" in text  # identical codings agree perfectly


def test_two_party_and_missing_optional_columns(tmp_path: Path) -> None:
    study = simulate_study(RATES, 50, 4, seed=7, format="two-party", survey=False)
    study = study.drop(columns=["confidence", "round", "persona", "model"])
    path = build_study_report(study, tmp_path)
    parsed = _parse(path)
    humans = study[study["witness_type"] == "human"]
    k, n = int(humans["judged_human"].sum()), len(humans)
    row = _row(parsed.sections["win-rates"], "human witnesses")
    assert row[1:3] == [str(n), str(k)] and row[4] == f"{k / n:.1%}"
    row = _row(parsed.sections["criteria"], "default", "ELIZA")
    assert row[5] == f"{k / n:.1%}"  # two-party reference = human witnesses' rate
    for section in ("confidence", "codes", "stt", "survey", "trial-order"):
        assert "Skipped" in parsed.text[section], section
    assert "persona_mixed_model: skipped" in parsed.text["regressions"]
    assert "Click a game" in parsed.text["games"]


def test_bad_input_raises_value_error(tmp_path: Path) -> None:
    study = _study()
    with pytest.raises(ValueError, match="judged_human"):
        build_study_report(study.drop(columns=["judged_human"]), tmp_path)
    with pytest.raises(ValueError, match="alpha"):
        build_study_report(study, tmp_path, alpha=1.5)

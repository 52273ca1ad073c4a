"""The human-study report in a real browser (Debian's chromium through Playwright): the page
loads from file:// with no network, shows its figures, and the game browser filters and opens
a transcript."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from turinglab.human.simulate import simulate_study
from turinglab.report.human_report import build_study_report

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
RATES = {"GPT-4.5-PERSONA": 0.7, "LLAMA-NO-PERSONA": 0.35, "ELIZA": 0.2}

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM), reason="Debian chromium is not installed"),
]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    study = simulate_study(RATES, 30, 3, seed=11)
    study["reason"] = "too polite <b>bold</b>"
    study["transcript"] = [
        json.dumps(
            [
                {"sender": "interrogator", "text": f"hello there ({g})", "t": 2.0},
                {"sender": "witness", "text": f"yo, I am {w} <script>x=1</script>", "t": 7.5},
            ]
        )
        for g, w in zip(study["game"], study["witness"], strict=True)
    ]
    return build_study_report(study, tmp_path_factory.mktemp("browser"))


def test_report_in_chromium(report: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        requests: list[str] = []
        page.on("request", lambda r: requests.append(r.url))
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(report.as_uri())

        assert page.locator("section#win-rates figure svg").count() == 1
        assert page.locator("figure svg").count() >= 5
        box = page.locator("section#win-rates figure svg").bounding_box()
        assert box and box["width"] > 300 and box["height"] > 150  # drawn, not collapsed

        games = page.locator("#games-browser-0")
        rows = games.locator(".list tbody tr")
        total = rows.count()
        assert total == 90  # 30 interrogators × 3 games, nothing excluded

        games.locator('select[data-filter="witness"]').select_option("ELIZA")
        eliza = rows.count()
        assert 0 < eliza < total
        assert set(rows.locator("td:nth-child(2)").all_inner_texts()) == {"ELIZA"}
        games.locator('select[data-filter="result"]').select_option("incorrect")
        assert set(rows.locator("td:nth-child(4)").all_inner_texts()) <= {"incorrect"}
        games.locator('select[data-filter="result"]').select_option("correct")
        assert rows.count() > 0
        assert set(rows.locator("td:nth-child(4)").all_inner_texts()) == {"correct"}

        first = rows.first
        game_id = first.locator("td").first.inner_text()
        first.click()
        detail = games.locator(".detail")
        assert "Transcript" in detail.inner_text()
        log = detail.locator("table.log").inner_text()
        assert f"hello there ({game_id})" in log
        assert "yo, I am ELIZA <script>x=1</script>" in log  # shown as text, not run
        assert "too polite <b>bold</b>" in detail.inner_text()
        assert page.evaluate("typeof window.x") == "undefined"

        games.scroll_into_view_if_needed()
        page.screenshot(path=str(report.parent / "browser.png"), full_page=False)
        browser.close()
    assert not errors, errors
    assert all(url.startswith("file://") for url in requests), requests

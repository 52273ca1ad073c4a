"""The report in a real browser: Debian's chromium through Playwright, opened from a file."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from turinglab.config import parse_config
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]


def _build(tmp_path: Path, **options: object) -> Path:
    config = parse_config(
        {
            "name": "browser-test",
            "agents": {
                "judge": {"kind": "scripted", "replies": ["Who are you?", "<answer>1</answer>"]},
                "mimic": {
                    "kind": "scripted",
                    "replies": [
                        "I am <img src=x onerror=alert(1)> a penguin",
                        "<answer>0</answer>",
                    ],
                },
            },
            "experiment": {"game": "gtt", "universe": ["judge", "mimic"], "trials_per_pair": 2},
        }
    )
    store = Store(str(tmp_path / "store.db"))
    run_id = asyncio.run(run_experiment(config, store, say=lambda _m: None)).run_id
    path = build_gtt_report(store, run_id, tmp_path / "out", n_boot=50, **options)
    store.close()
    return path


def _trials_saying(tmp_path: Path, word: str) -> int:
    store = Store(str(tmp_path / "store.db"))
    try:
        run = store.resolve_run("browser-test")
        return sum(
            any(word in m.text for m in store.transcript(r.attempt_id))
            for r in store.results(run.id)
        )
    finally:
        store.close()


def test_report_in_chromium(tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    report = _build(tmp_path)
    source = report.read_text(encoding="utf-8")
    # The transcripts travel compressed: their text is not in the page as such.
    assert 'type="application/octet-stream"' in source
    assert "a penguin" not in source
    network: list[str] = []
    dialogs: list[str] = []
    errors: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("request", lambda r: network.append(r.url) if r.url.startswith("http") else None)
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(report.as_uri())
        assert page.locator("figure svg").count() >= 5  # heatmap, graphs, sweep, scores, …
        browser_root = page.locator("#transcripts .browser")
        browser_root.locator(".count").wait_for()  # the list is inflated first
        assert "8 of 8 records" in browser_root.locator(".count").inner_text()
        browser_root.locator("select[data-filter=pair]").select_option("mimic → judge")
        assert "2 of 8 records" in browser_root.locator(".count").inner_text()
        rows = browser_root.locator(".list tbody tr")
        assert rows.count() == 2 and all("mimic → judge" in t for t in rows.all_inner_texts())
        # Open the trial in which X was the actor (mimic imitating judge).
        browser_root.locator(".list tbody tr", has_text="actor").first.click()
        browser_root.locator(".detail[data-shown]").wait_for()  # inflated by the page itself
        views = browser_root.locator(".conv")
        assert views.count() == 2  # the distinguisher's and the unknown's own views
        unknown_view = browser_root.locator('.conv[data-seat="unknown"]').inner_text()
        assert "I am <img src=x onerror=alert(1)> a penguin" in unknown_view  # shown as text
        assert browser_root.locator(".detail img").count() == 0  # and not as markup
        assert "visible_to" in browser_root.locator(".detail table.log").inner_text()
        # Searching message text inflates every chunk first, then filters.
        browser_root.locator("select[data-filter=pair]").select_option("")
        browser_root.locator("input[type=search]").fill("penguin")
        count = browser_root.locator(".count")
        count.filter(has_text="of 8 records").wait_for()
        saying = _trials_saying(tmp_path, "penguin")
        assert 0 < saying < 8 and f"{saying} of 8 records" in count.inner_text()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        browser.close()
    assert not network and not dialogs and not errors


def test_uncompressed_transcripts_still_work(tmp_path: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists():
        pytest.skip(f"{CHROMIUM} is not installed")
    report = _build(tmp_path, compress_transcripts=False)
    assert "a penguin" in report.read_text(encoding="utf-8")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page()
        page.goto(report.as_uri())
        root = page.locator("#transcripts .browser")
        assert "8 of 8 records" in root.locator(".count").inner_text()  # no waiting needed
        root.locator(".list tbody tr").first.click()
        assert root.locator(".conv").count() == 2  # shown at once, nothing to inflate
        browser.close()

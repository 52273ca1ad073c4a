"""Make docs/screenshots/gtt-report-*.png: a GTT run of five agents (two on the fake OpenAI
server, two scripted, ELIZA) in every variant the report draws, its HTML report, and chromium
screenshots at 1280 and 390 px. The agents are deterministic, so every cell is 0 % or 100 %.

    PYTHONPATH=src python docs/screenshots/gtt_report_shots.py [WORKDIR]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

from turinglab.config import parse_config
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store
from turinglab.testing.fake_openai import FakeOpenAIServer

HERE = Path(__file__).resolve().parent
UNIVERSE = ["eliza", "judge", "mimic", "alpha", "beta"]
# Scripted judges decide by script (judge: 1, mimic: 0); the fake server's verdict hashes the
# conversation, so it depends on who X is; ELIZA never gives a verdict.
SCRIPTED = {
    "judge": {"kind": "scripted", "replies": ["What is 2+2?", "Right. <answer>1</answer>"]},
    "mimic": {"kind": "scripted", "replies": ["Hello there", "Hmm.", "<answer>0</answer>"]},
}
# (section anchor, file stem, widths)
SHOTS = [
    ("overview", "overview", (1280, 390)),
    ("gtt-advantage", "heatmap", (1280, 390)),
    ("gtt-relations", "relations", (1280,)),
    ("gtt-scores", "scores", (1280, 390)),
    ("table1", "table1", (1280, 390)),
    ("ability", "ability", (1280,)),
    ("budget", "budget", (1280, 390)),
    ("fixed-distinguisher", "fd", (1280, 390)),
]


async def play(db: Path) -> str:
    server = FakeOpenAIServer()
    base_url = await server.start()
    agent = {"kind": "openai", "base_url": base_url, "timeout_s": 10}
    config = parse_config(
        {
            "name": "gtt-report-shots",
            "agents": SCRIPTED
            | {name: agent | {"model": f"fake-{name}"} for name in ("alpha", "beta")},
            "experiment": {
                "game": "gtt",
                "variants": ["gtt", "gttq", "gtt-turns", "gttq-queries", "fdgtt"],
                "universe": UNIVERSE,
                "distinguishers": ["alpha", "judge"],
                "budgets": [1, 2, 3],
                "budget_pairs": [
                    ["beta", "alpha"],
                    ["mimic", "alpha"],
                    ["eliza", "alpha"],
                    ["alpha", "judge"],
                ],
                "trials_per_pair": 4,
                "max_distinguisher_turns": 4,
                "max_specimen_turns": 2,
                "on_turn_cap": "ask-for-answer",
                "seed": 5,
            },
        }
    )
    store = Store(str(db))
    try:
        return (await run_experiment(config, store, say=lambda _m: None)).run_id
    finally:
        store.close()
        await server.stop()


def main(work: Path) -> None:
    run_id = asyncio.run(play(work / "store.db"))
    store = Store(str(work / "store.db"))
    page_path = build_gtt_report(store, run_id, work / "report", n_boot=500, max_transcripts=50)
    store.close()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox"])
        for width in (1280, 390):
            page = browser.new_page(viewport={"width": width, "height": 900})
            page.goto(page_path.as_uri())
            for anchor, stem, widths in SHOTS:
                if width in widths:
                    page.locator(f"section#{anchor}").screenshot(
                        path=str(HERE / f"gtt-report-{stem}-{width}.png")
                    )
            page.close()
        browser.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tempfile.mkdtemp()))

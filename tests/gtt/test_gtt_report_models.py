"""The ability-model and Theorem 3 sections of the GTT report, on a real store."""

from __future__ import annotations

import re
from pathlib import Path

from turinglab.config import parse_config
from turinglab.report.gtt_report import build_gtt_report
from turinglab.runner.execute import run_experiment
from turinglab.store.database import Store


def text_of(html: str, anchor: str) -> str:
    start = html.index(f'id="{anchor}"')
    chunk = re.sub(r"<svg.*?</svg>", " ", html[start : start + 60_000], flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", chunk))


async def test_ability_and_theorem3_sections(tmp_path: Path) -> None:
    config = parse_config(
        {
            "name": "models",
            "agents": {
                "a": {"kind": "scripted", "replies": ["Hi?", "STOP", "<answer>1</answer>"]},
                "b": {"kind": "scripted", "replies": ["Hello", "STOP", "<answer>0</answer>"]},
            },
            "experiment": {
                "game": "gtt",
                "variants": ["gtt", "gttq"],
                "universe": ["a", "b"],
                "trials_per_pair": 4,
            },
        }
    )
    store = Store(str(tmp_path / "m.db"))
    summary = await run_experiment(config, store, say=lambda m: None)
    html = build_gtt_report(store, summary.run_id, tmp_path / "out").read_text()
    ability = text_of(html, "ability")
    # "a" always answers 1 and "b" always 0: both are perfectly separated judges, so the
    # report falls back to the prior and says so.
    assert "posterior modes" in ability and "θ imitation" in ability
    assert (tmp_path / "out" / "gtt-ability.png").exists()
    theorem = text_of(html, "theorem3")
    # Scripted replies do not depend on the specimen: querying changes nothing, no violation.
    assert "0 of 4 pairs violate" in theorem
    store.close()

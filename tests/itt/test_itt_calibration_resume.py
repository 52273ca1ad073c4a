"""benchmarks/itt_calibration.py --resume: a run adds rounds to the committed results. The
datasets it draws must be the ones an uninterrupted run would have drawn next (each cell's
generator replayed), and the tallies must add up (counts summed, Clopper–Pearson recomputed,
means weighted by their datasets; a statistic only the new rounds measure kept as it is)."""

from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import numpy as np

from turinglab.itt.dataset import Response

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "itt_calibration.py"


def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("itt_calibration", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["itt_calibration"] = module
    spec.loader.exec_module(module)
    return module


def fake_chats(n: int = 80) -> dict[str, list[Response]]:
    """Chats of 4 turns with texts that name their place (no embedding needed to draw)."""
    return {
        f"c{k:03d}": [
            Response(
                item=f"c{k:03d}-{t}",
                task="conversation",
                stimulus_id=f"c{k:03d}",
                source="human",
                agent=f"p{t % 2}",
                text=f"chat {k} turn {t}",
                conversation=f"c{k:03d}",
                turn=t,
                speaker="AB"[t % 2],
            )
            for t in range(4)
        ]
        for k in range(n)
    }


def test_a_resumed_run_draws_the_datasets_an_uninterrupted_run_draws_next() -> None:
    b = bench()
    chats = fake_chats()
    args = argparse.Namespace(sizes=[20, 40, 60], datasets=50, controls=3, controls_every=2)

    def generators() -> tuple[dict, dict]:
        rngs = {(s, d): np.random.default_rng([s, len(d)]) for s, d in b.CELLS}
        return rngs, {c: np.random.default_rng([c[1], 7]) for c in b.CONTROLS}

    straight, straight_signal = generators()
    b.replay(7, args, chats, straight, straight_signal)  # 7 rounds in one go …
    resumed, resumed_signal = generators()
    done = b.replay(4, args, chats, resumed, resumed_signal)  # … or 4, stopped, then 3 more
    assert done == 2
    for i in range(4, 7):
        for size, design in b.CELLS:
            b.dataset(chats, resumed[(size, design)], size, design, "none")
        for signal, size in b.CONTROLS:
            if not (i % args.controls_every or done >= args.controls):
                b.dataset(chats, resumed_signal[(signal, size)], size, "balanced", signal)
        done += i % args.controls_every == 0 and done < args.controls
    for key in straight:
        a = b.dataset(chats, straight[key], key[0], key[1], "none")
        c = b.dataset(chats, resumed[key], key[0], key[1], "none")
        assert [r.item for r in a] == [r.item for r in c]
    for key in straight_signal:
        a = b.dataset(chats, straight_signal[key], key[1], "balanced", key[0])
        c = b.dataset(chats, resumed_signal[key], key[1], "balanced", key[0])
        assert [r.text for r in a] == [r.text for r in c]


def test_tallies_of_two_runs_add_up() -> None:
    b = bench()
    old = {"20": {"balanced": {"side": {
        "permutation_interval": {"excluded": 3, "datasets": 100, "rate": 0.03, "ci": []},
        "interval_and_test_disagree": 0,
        "cluster_bootstrap": {"excluded": 15, "datasets": 100, "rate": 0.15, "ci": []},
        "mean_estimate": 0.49, "inconclusive": 1,
    }}}}  # fmt: skip
    new = {"20": {"balanced": {
        "side": {
            "permutation_interval": {"excluded": 7, "datasets": 300, "rate": 0.0233, "ci": []},
            "interval_and_test_disagree": 0,
            "cluster_bootstrap": {"excluded": 45, "datasets": 300, "rate": 0.15, "ci": []},
            "mean_estimate": 0.51, "inconclusive": 2,
        },
        "side p_H_given_H": {
            "permutation_interval": {"excluded": 12, "datasets": 300, "rate": 0.04, "ci": []},
            "mean_estimate": 0.5, "mean_null_value": 0.49,
        },
    }}}  # fmt: skip
    got = b.merged_results(old, new)["20"]["balanced"]
    side = got["side"]
    assert side["permutation_interval"] == {
        "excluded": 10, "datasets": 400, "rate": 0.025, "ci": b.clopper_pearson(10, 400)
    }  # fmt: skip
    assert side["cluster_bootstrap"]["excluded"] == 60
    assert side["mean_estimate"] == 0.505 and side["inconclusive"] == 3
    assert got["side p_H_given_H"] == new["20"]["balanced"]["side p_H_given_H"]
    assert b.merged_results(old, {}) == old

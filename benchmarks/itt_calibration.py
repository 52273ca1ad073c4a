"""Coverage of the 95% detectability interval on simulated no-signal datasets (the calibration
figure): the share of datasets whose interval excludes chance (0.5), as conversations per
source grow, for

- the studentized cluster interval `itt` uses (bootstrap.intervals: one-way cluster bootstraps
  of units and judges, G/(G−1) variances, t quantiles on G−1 degrees of freedom);
- the two-way percentile cluster bootstrap used before (too narrow with few clusters);
- the row-level Wald interval used before that (every message and CV seed a row).

    PYTHONPATH=src:tests python benchmarks/itt_calibration.py --out benchmarks/itt_calibration.json

The generator is the test's (tests/test_itt_bootstrap.py: each conversation has its own pull
towards "H", the same for human and machine conversations; 6 messages; 3 CV seeds)."""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from test_itt_bootstrap import SEEDS, no_signal
from turinglab.itt.bootstrap import intervals, judged, percentile, replicate_cells, statistics
from turinglab.itt.metrics import Confusion

COMMAND = (
    "PYTHONPATH=src:tests python benchmarks/itt_calibration.py "
    "--out benchmarks/itt_calibration.json"
)


def excluded(ci: tuple[float, float] | None) -> bool:
    return ci is not None and (ci[0] > 0.5 or ci[1] < 0.5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--datasets", type=int, default=1000)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    rows = []
    for convs in (5, 10, 20, 30, 50):
        rng = np.random.default_rng(convs)
        studentized = two_way = naive = 0
        start = time.perf_counter()
        for i in range(args.datasets):
            d = no_signal(rng, convs=convs)
            n = len(d["units"])
            data = judged(d["units"], ["ai"] * n, [1 / SEEDS] * n, d["human"], d["said_human"])
            studentized += excluded(intervals(data, 1000, seed=i)["detectability"])
            old = statistics(replicate_cells(data, 1000, seed=i))["detectability"]
            two_way += excluded(percentile(old))
            h = np.array(d["human"])
            s = np.array(d["said_human"])
            pooled = Confusion(
                float((h & s).sum()), float((h & ~s).sum()), float((~h & s).sum()),
                float((~h & ~s).sum()),
            )  # fmt: skip
            naive += excluded(pooled.detectability_ci())
        rows.append(
            {
                "conversations_per_source": convs,
                "datasets": args.datasets,
                "studentized_cluster_interval_excludes_chance": round(
                    studentized / args.datasets, 4
                ),
                "percentile_cluster_bootstrap_excludes_chance": round(two_way / args.datasets, 4),
                "row_level_interval_excludes_chance": round(naive / args.datasets, 4),
                "seconds": round(time.perf_counter() - start, 2),
            }
        )
        print(rows[-1])
    out = {"nominal": 0.05, "command": COMMAND, "settings": rows}
    args.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""Time and peak memory of `itt score`, the cluster bootstrap and `itt judge` at 1k/10k/100k.

    PYTHONPATH=src python benchmarks/itt_scale.py --out benchmarks/itt_scale.json

Every measurement runs in a fresh process (its wall time and its own peak RSS from wait4), on
generated data:

- score: a judgements CSV with half human-judge rows (one judge per 20 rows) and half AI rows
  (3 CV seeds per response), 2 tasks, 3 models, one stimulus per 10 rows; `itt score --json`
  with 1000 bootstrap replicates for every table;
- bootstrap: `bootstrap.intervals` alone on arrays of the same shape (1000 replicates);
- judge: `itt judge` end to end (MiniLM embeddings + 10-fold × 3-seed CV + extrapolation) on a
  captioning dataset where the machine can afford it (embedding runs at ~16 texts/s on this
  shared 2-core machine), and the cross-validation alone (random 384-d features standing in
  for the embeddings) at every size."""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = [
    "a",
    "the",
    "dog",
    "cat",
    "man",
    "woman",
    "child",
    "bus",
    "street",
    "beach",
    "park",
    "red",
    "blue",
    "runs",
    "sits",
    "plays",
    "reads",
]


def measure(cmd: list[str]) -> dict[str, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    err = proc.stderr.read().decode() if proc.stderr else ""
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {err[-500:]}")
    return {"seconds": round(seconds, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1)}


def judgements_csv(path: Path, n: int) -> None:
    rng = random.Random(n)
    lines = ["judge,judge_type,item,source,model,label,task,unit"]
    for i in range(n // 2):
        src = "human" if i % 2 else "machine"
        model = "" if src == "human" else f"m{i % 3}"
        task = ("captioning", "word-association")[(i // 2) % 2]
        label = rng.choice("HM")
        lines.append(f"p{i // 20},human,r{i},{src},{model},{label},{task},s{i // 10}")
    for i in range(n // 6):
        src = "human" if i % 2 else "machine"
        model = "" if src == "human" else f"m{i % 3}"
        task = ("captioning", "word-association")[(i // 2) % 2]
        for seed in range(3):
            lines.append(
                f"svm-minilm-{task}/seed{seed},ai,a{i},{src},{model},{rng.choice('HM')},"
                f"{task},s{i // 10}"
            )
    path.write_text("\n".join(lines) + "\n")


def dataset_csv(path: Path, n: int) -> None:
    rng = random.Random(n)
    lines = ["item,task,stimulus_id,source,agent,text"]
    for i in range(n):
        src = "human" if i % 4 == 0 else "machine"
        agent = "p" if src == "human" else f"m{i % 3}"
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12)))
        lines.append(f"r{i},captioning,img{i // 8},{src},{agent},{text}")
    path.write_text("\n".join(lines) + "\n")


BOOTSTRAP = """
import sys, time, numpy as np
from turinglab.itt.bootstrap import judged, intervals
n = int(sys.argv[1]); rng = np.random.default_rng(0)
data = judged([f"s{i // 10}" for i in range(n)], [f"p{i // 20}" for i in range(n)],
              [1.0] * n, (np.arange(n) % 2 == 0).tolist(), (rng.random(n) < 0.5).tolist())
intervals(data, 1000)
"""

CV = """
import sys, numpy as np
from turinglab.itt.ai_judges import Sample, cross_validate
n = int(sys.argv[1]); rng = np.random.default_rng(0)
feats = rng.standard_normal((n, 384)).astype(np.float32)
samples = [Sample(f"r{i}", f"img{i // 8}", "human" if i % 4 == 0 else "machine",
                  None if i % 4 == 0 else f"m{i % 3}") for i in range(n)]
cross_validate(feats, samples, judge="svm", folds=10, seeds=(0, 1, 2))
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--cv-sizes", default="1000,10000,100000", help="CV-only sizes")
    parser.add_argument("--judge-sizes", default="1000", help="end-to-end `itt judge` sizes")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s]
    py = sys.executable
    out: dict[str, object] = {
        "command": " ".join(["python", *sys.argv]),
        "cpu_count": os.cpu_count(),
        "load_average_1min_at_start": round(os.getloadavg()[0], 2),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "score": {},
        "bootstrap": {},
        "cv_only": {},
        "judge": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            path = Path(tmp) / f"j{n}.csv"
            judgements_csv(path, n)
            rows = sum(1 for _ in path.open()) - 1
            got = measure([py, "-m", "turinglab", "itt", "score", str(path), "--json"])
            out["score"][str(n)] = {"rows": rows, **got}  # type: ignore[index]
            out["bootstrap"][str(n)] = measure([py, "-c", BOOTSTRAP, str(n)])  # type: ignore[index]
            print(n, json.dumps({k: out[k].get(str(n)) for k in ("score", "bootstrap")}))  # type: ignore[attr-defined]
        for n in [int(s) for s in args.cv_sizes.split(",") if s]:
            out["cv_only"][str(n)] = measure([py, "-c", CV, str(n)])  # type: ignore[index]
            print(n, out["cv_only"][str(n)])  # type: ignore[index]
        for n in [int(s) for s in args.judge_sizes.split(",") if s]:
            data = Path(tmp) / f"d{n}.csv"
            dataset_csv(data, n)
            study = Path(tmp) / f"study{n}"
            out["judge"][str(n)] = measure(  # type: ignore[index]
                [py, "-m", "turinglab", "itt", "judge", str(data), "--out", str(study)]
            )
            print(n, out["judge"][str(n)])  # type: ignore[index]
    out["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
    args.out.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()

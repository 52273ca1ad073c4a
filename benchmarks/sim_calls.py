"""Python calls a simulated schedule makes (seeds 2-11 after a warm-up on seed 1), counted with
cProfile: unlike CPU seconds, which vary by a third run to run on the 2-core machines, the
count is the same on every run of the same code, so before/after ratios of a change are exact.

    PYTHONHASHSEED=0 python benchmarks/sim_calls.py   # prints {"calls": ..., "cpu_s": ...}
"""

from __future__ import annotations

import cProfile
import json
import pstats
import time

from turinglab.sim.run import schedule


def main() -> None:
    schedule(1)  # imports, caches, the template store
    profile, began = cProfile.Profile(), time.process_time()
    profile.enable()
    for seed in range(2, 12):
        schedule(seed)
    profile.disable()
    cpu_s = time.process_time() - began
    calls = pstats.Stats(profile).total_calls  # type: ignore[attr-defined]
    print(json.dumps({"seeds": "2:12", "calls": calls, "cpu_s_profiled": round(cpu_s, 2)}))


if __name__ == "__main__":
    main()

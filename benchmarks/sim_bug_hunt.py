"""Run sim schedules until the first violation: how many a put-back bug needs to be found.

    PYTHONHASHSEED=0 PYTHONPATH=src python benchmarks/sim_bug_hunt.py A B PROCESSES FAULTS [--all]

Seeds A..B-1 on PROCESSES processes with FAULTS (comma-separated: crash, redis-restart, pause);
the stock invariants (sim/invariants.py) decide. `--all` goes on past the first. A heavier plan
than `Plan.draw`'s, if asked: SIM_PEOPLE (a fixed count), SIM_ABANDON_P (per person and game),
SIM_END_EARLY_P (per game: the interrogator ends the talk early; 0 by default).
"""

import dataclasses
import json
import os
import sys
import time

import turinglab.sim.run as run
from turinglab.sim import world

a, b, procs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
faults = frozenset(sys.argv[4].split(","))
every = "--all" in sys.argv
_draw = world.Plan.draw.__func__  # type: ignore[attr-defined]


def draw(cls, rng, processes, faults):  # type: ignore[no-untyped-def]
    plan = _draw(cls, rng, processes, faults)
    over: dict = {}
    if os.environ.get("SIM_ABANDON_P"):
        over["abandon_p"] = float(os.environ["SIM_ABANDON_P"])
    if os.environ.get("SIM_END_EARLY_P"):
        over["end_early_p"] = float(os.environ["SIM_END_EARLY_P"])
    if os.environ.get("SIM_PEOPLE"):
        over["people"] = int(os.environ["SIM_PEOPLE"])
    return dataclasses.replace(plan, **over)


world.Plan.draw = classmethod(draw)  # type: ignore[method-assign,assignment]
run.Plan = world.Plan  # type: ignore[misc]
n, t0 = 0, time.time()
for s in range(a, b):
    r = run.schedule(s, procs, faults)
    n += 1
    found = sorted({x["invariant"] for x in r["violations"]})
    print(f"seed {s} {'VIOLATED ' + ','.join(found) if found else 'ok'}", flush=True)
    if found:
        print(json.dumps({"seed": s, "schedules": n, "violations": r["violations"][:3]}))
        if not every:
            break
print(f"done {n} schedules in {time.time() - t0:.0f} s", flush=True)

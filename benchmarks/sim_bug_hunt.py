"""Run sim schedules until the first violation: how many a put-back bug needs to be found.

    PYTHONHASHSEED=0 PYTHONPATH=src python benchmarks/sim_bug_hunt.py A B PROCESSES FAULTS [--all]

Seeds A..B-1 on PROCESSES processes with FAULTS (comma-separated: crash, redis-restart, pause);
the stock invariants (sim/invariants.py) decide. `--all` goes on past the first. A heavier plan
than `Plan.draw`'s, if asked: SIM_PEOPLE (a fixed count), SIM_ABANDON_P (per person and game),
SIM_END_EARLY_P (per game: the interrogator ends the talk early; 0 by default), SIM_GIVE_UP_P
(per break of a page mid-game — server lost, message stuck 5 s: closed for good; 0 by
default).
"""

import json
import os
import sys
import time

import turinglab.sim.run as run

a, b, procs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
faults = frozenset(sys.argv[4].split(","))
every = "--all" in sys.argv
# A heavier plan than the seed's own, if asked (set on the drawn plan: the rest stays the seed's).
over: dict[str, float] = {
    field: float(os.environ[env])
    for field, env in (
        ("abandon_p", "SIM_ABANDON_P"),
        ("end_early_p", "SIM_END_EARLY_P"),
        ("give_up_p", "SIM_GIVE_UP_P"),
        ("people", "SIM_PEOPLE"),
    )
    if os.environ.get(env)
}
if "people" in over:
    over["people"] = int(over["people"])
n, t0 = 0, time.time()
for s in range(a, b):
    r = run.schedule(s, procs, faults, over)
    n += 1
    found = sorted({x["invariant"] for x in r["violations"]})
    print(f"seed {s} {'VIOLATED ' + ','.join(found) if found else 'ok'}", flush=True)
    if found:
        print(json.dumps({"seed": s, "schedules": n, "violations": r["violations"][:3]}))
        if not every:
            break
print(f"done {n} schedules in {time.time() - t0:.0f} s", flush=True)

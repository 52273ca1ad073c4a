"""Human-judged Turing tests (SPEC §2–§3): three- and two-party studies and the Strong Turing Test.

Modules: schema (import, validation), exclusions, winrates, criteria (Giunti's pass criteria),
confidence (distributions, calibration), audit (design criteria, power), strong (STT),
simulate (simulated studies with known parameters). Regressions live in `regressions`
(another module's owner); everything here is pure analysis over the study table.
"""

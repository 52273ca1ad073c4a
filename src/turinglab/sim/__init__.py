"""A deterministic simulation of the arena: several real arena processes (their web apps,
cluster and store code, unchanged) in one OS process, on a virtual clock, with simulated
people, network and faults, every random choice drawn from one seed (docs/simulation.md)."""

"""Witness supply meets demand (matchmaking_wait.py's `short_of_witnesses`): a two-party study
of 4 rounds with bursty arrivals, simulated on the real lobby and blind matcher. Only
interrogations drawn "person" supply witness rounds, so some witness-only people are never
taken; they must get the study's fallback, not the timed-out code after `max_wait_s`."""

from __future__ import annotations

import random

import pytest

from turinglab.arena.rounds import RoundBook
from turinglab.bench.witness_supply import simulate


@pytest.mark.parametrize("share", [0.5, 0.8])
def test_nobody_times_out_for_lack_of_a_partner_under_bursts(share: float) -> None:
    out = simulate(60, 4, seed=2, share=share)
    assert out.timed_out == 0
    assert out.completed == 60
    assert out.excused > 0  # the design's shortfall, met by the fallback
    assert sum(out.witness_rounds) > 0
    assert max(out.waits_s) <= 45.0 + 0.5  # interrogators still wait only the drawn time


def test_excused_witness_rounds_complete_the_study_but_are_not_played() -> None:
    book = RoundBook(4, random.Random(0))
    book.record("p", "interrogator")
    book.record("p", "interrogator")
    book.record("p", "witness")
    assert not book.done("p") and book.may("p", "witness")
    assert book.excuse("p") == 1
    assert book.done("p") and book.played("p") == 3 and not book.may("p", "witness")

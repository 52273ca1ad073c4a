"""The simulator's checks of people's games (sim/promises.py, Tally.look), fed crafted tallies
and stores, each shown to pass what is right and to report what is wrong:

* a departure told after the abandon grace + slack, or never, is reported; one whose game ended
  by itself before the grace ran out, or that everyone left, is not; a game that finished must
  have ended its talk within the grace + slack of the departure;
* a person with more counted games in a role than the study gives it, or whose final round
  book differs from the store's count, is reported; flagged and abandoned games are not counted;
* a message or control-event row written by a process that did not own its game is reported;
* a frame before the reveal that names the AI or holds a seat's kind is noted, the people's and
  the AI's own words are not searched, and the reveal itself is not.
"""

from __future__ import annotations

from turinglab.bench.arena_tally import Tally
from turinglab.sim.promises import departures_late, rounds_miscounted, stale_writes

GRACE_S = 12.0
HIDDEN = ('"kind"', '"BOT"', "BOT (")


def _left(game: str, at: float, told: float | None = None, leavers: int = 1) -> Tally:
    tally = Tally()
    tally.left[game] = at
    tally.leavers[game] = leavers
    if told is not None:
        tally.told[game] = told
    return tally


def test_a_departure_told_past_the_grace_and_slack_is_late() -> None:
    ends = {"g": ("abandoned", 113.0)}
    assert departures_late(_left("g", 100.0, told=114.0), ends, GRACE_S) == []
    (late,) = departures_late(_left("g", 100.0, told=128.5), ends, GRACE_S)
    assert "28.5 s" in late


def test_a_departure_across_a_takeover_is_due_within_the_slack_of_the_takeover() -> None:
    ends = {"g": ("abandoned", 140.0)}
    tally = _left("g", 100.0, told=131.0)  # its owner died: the other page told "moving" at 120
    tally.moved["g"] = 120.0
    assert departures_late(tally, ends, GRACE_S) == []
    tally.told["g"] = 136.0  # 16 s after the takeover: the new owner was slow
    (late,) = departures_late(tally, ends, GRACE_S)
    assert "36.0 s" in late
    tally.moved["g"], tally.told["g"] = 95.0, 131.0  # moved before the departure: no excuse
    assert departures_late(tally, ends, GRACE_S) != []


def test_a_departure_never_told_is_reported_unless_the_game_ended_by_itself_first() -> None:
    (never,) = departures_late(_left("g", 100.0), {"g": ("abandoned", 112.0)}, GRACE_S)
    assert "never told" in never
    assert departures_late(_left("g", 100.0), {"g": ("flagged", 130.0)}, GRACE_S) != []
    # an AI witness's failure ended it as the person left: not a departure to tell
    assert departures_late(_left("g", 100.0), {"g": ("flagged", 101.0)}, GRACE_S) == []
    # both people left: nobody to tell
    assert departures_late(_left("g", 100.0, leavers=2), {"g": ("abandoned", 112.0)}, GRACE_S) == []


def test_a_finished_game_whose_talk_went_on_long_after_a_departure_is_reported() -> None:
    tally = _left("g", 100.0, told=140.0)  # the reveal, after the verdict
    tally.talk_ends["g"] = 111.0  # the talk ended within the grace: the witness no longer mattered
    assert departures_late(tally, {"g": ("finished", 140.0)}, GRACE_S) == []
    tally.talk_ends["g"] = 150.0  # the game went on without them, and counted
    (late,) = departures_late(tally, {"g": ("finished", 170.0)}, GRACE_S)
    assert "50.0 s after a departure" in late


def _book(who: str, played: int, state: str = "rounds-done") -> Tally:
    tally = Tally()
    tally.books[who] = [played, 2, state]
    return tally


def test_rounds_counted_in_the_store_match_the_final_book() -> None:
    seated = [("p1", "interrogator", "finished"), ("p1", "witness_a", "finished"),
              ("p1", "witness_b", "abandoned"), ("p1", "interrogator", "flagged")]  # fmt: skip
    assert rounds_miscounted(_book("p1", 2), seated, 2) == ([], [])
    over, off = rounds_miscounted(_book("p1", 3), seated, 2)
    assert over == [] and off == ["p1: book 3/2 (rounds-done), store 2"]
    # a book that may still move (the person is waiting) is not compared
    assert rounds_miscounted(_book("p1", 1, "waiting"), seated, 2) == ([], [])
    # nobody seated: their book must say 0
    assert rounds_miscounted(_book("p2", 1, "no-match"), [], 2)[1] != []


def test_more_counted_games_in_a_role_than_the_study_gives_is_reported() -> None:
    seated = [("p1", "interrogator", "finished"), ("p1", "interrogator", "finished")]
    over, _ = rounds_miscounted(Tally(), seated, 2)
    assert over and over[0].startswith("p1: {'interrogator': 2}")
    assert rounds_miscounted(Tally(), seated, 4) == ([], [])  # 4 rounds: 2 interrogating


def test_a_row_written_by_a_process_that_did_not_own_its_game_is_stale() -> None:
    writes = [("p0", "messages", 3, 0, "p0/ab12", 0, 10.0),
              ("p1", "messages", 3, 1, "p1/cd34", 1, 30.0),
              ("p0", "control_events", 3, 0, "p1/cd34", 1, 31.0)]  # fmt: skip
    (stale,) = stale_writes(writes)
    assert stale.startswith("control_events 3#0 by p0") and "owner p1/cd34 (epoch 1)" in stale


def test_a_frame_before_the_reveal_naming_the_ai_or_a_kind_is_noted() -> None:
    tally = Tally()
    said = {"type": "message", "sender": "them", "channel": "A", "text": "I am the BOT (ha)"}
    tally.look("p0r0", "g", said, HIDDEN)  # what a witness says is theirs
    line = {"sender": "game", "text": "BOT (scripted) joined"}
    snap = {"type": "game", "game": "g", "reveal": None, "messages": [{**said, "n": 0}, line]}
    tally.look("p0r0", "g", snap, HIDDEN)  # the arena's own line is searched
    tally.look("p0r0", "g", {"type": "phase", "kind": "ai"}, HIDDEN)
    sides = [{"channel": "B", "kind": "ai", "name": "BOT"}]
    tally.look("p0r0", "g", {"type": "reveal", "sides": sides}, HIDDEN)  # the reveal may
    assert [(leak["word"], leak["frame"]) for leak in tally.leaks] == [
        ("BOT (", "game"),
        ('"kind"', "phase"),
    ]


def test_a_no_match_makes_the_book_the_person_waited_with_final() -> None:
    tally = Tally()
    waiting = {"type": "status", "state": "waiting", "rounds": {"played": 1, "total": 2}}
    tally.book("p1", waiting)
    assert tally.books["p1"] == [1, 2, "waiting"]  # not compared: it may still move
    tally.book("p1", {"type": "status", "state": "no-match", "waited_s": 120.0})
    assert tally.books["p1"] == [1, 2, "no-match"]
    assert rounds_miscounted(tally, [("p1", "witness_a", "finished")], 2) == ([], [])
    assert rounds_miscounted(tally, [], 2)[1] == ["p1: book 1/2 (no-match), store 0"]

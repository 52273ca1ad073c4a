"""An AI witness's reply without the prompt around it (issue 31: SmolLM2 sent "Ashley: I'm
here to help you", and replies cut mid-sentence at max_tokens): labels, echoed prompt lines and
the other side's next turn are taken out; a reply the token limit cut is cut back to an end.
The strings are of the kinds small chat models send; the last test plays a real game."""

from __future__ import annotations

import pytest

from turinglab.games.witness_reply import clean_reply, cut_to_an_end


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        ("Ashley: I'm here to help you", "I'm here to help you"),
        ("Witness: hey, not much", "hey, not much"),
        ("**Ashley:** lol no", "lol no"),
        ("B: leeds, you?", "leeds, you?"),
        ("A: nah", "nah"),
        ("Person B: just chilling", "just chilling"),
        ("assistant: sure", "sure"),
        # the other side's next turn, written by the model, ends the reply
        ("not much tbh\nInterrogator: where are you from?\nAshley: leeds", "not much tbh"),
        ("ngl tired\nPerson A: same", "ngl tired"),
        # the question echoed first, then the answer
        ("Interrogator: hi\nAshley: hey", "hey"),
        # the prompt's own fields copied out
        ("Name: Ashley\nLocation: Leeds, UK\nhey whats up", "hey whats up"),
        ("hey\nTime remaining: 4:12", "hey"),
        ("Your role: Witness\nCurrent time: 2026-12-02 05:00:00 GMT\nyo", "yo"),
        # what a person writes with a colon is left alone
        ("honestly: no idea", "honestly: no idea"),
        ("it was 4:30 when i woke up", "it was 4:30 when i woke up"),
        ("my fav game rn: hollow knight", "my fav game rn: hollow knight"),
        ("hey there", "hey there"),
    ],
)
def test_labels_and_scaffolding_are_taken_out(sent: str, shown: str) -> None:
    assert clean_reply(sent, names=["Ashley"]) == shown


def test_only_the_witness_s_own_name_counts_as_its_label() -> None:
    assert clean_reply("Jordan: hi", names=["Ashley"]) == "Jordan: hi"
    assert clean_reply("Jordan: hi", names=["Jordan"]) == "hi"


def test_a_reply_of_nothing_but_scaffolding_is_left_as_it_came() -> None:
    # Nothing a person would type is left: the game's own checks then see the reply as sent.
    assert clean_reply("Name: Ashley", names=["Ashley"]) == "Name: Ashley"


@pytest.mark.parametrize(
    ("sent", "shown"),
    [
        # SmolLM2 at max_tokens 60: the last sentence was cut
        (
            "I'm from Leeds. It's a nice city in the north of England, and I have been liv",
            "I'm from Leeds.",
        ),
        ("Sure! I love pizza. What about y", "Sure! I love pizza."),
        ("really? that's wild… i never kn", "really? that's wild…"),
        ("first line\nsecond line that goes on and o", "first line"),
        # the persona writes without full stops: back to the last whole word
        (
            "nah i was just playing some games with my frie",
            "nah i was just playing some games with my",
        ),
        ("idk maybe, like", "idk maybe"),
        ("it ended here.", "it ended here."),
        ("word", "word"),
    ],
)
def test_a_reply_cut_by_the_token_limit_ends_where_a_person_would(sent: str, shown: str) -> None:
    assert cut_to_an_end(sent) == shown
    assert clean_reply(sent, truncated=True) == shown


def test_a_reply_that_ended_on_its_own_is_not_cut() -> None:
    sent = "nah i was just playing some games with my frie"
    assert clean_reply(sent, truncated=False) == sent

"""The one-stimulus ITT tasks: stimuli files refused with line and column, and the controls
people and agents get (itt/tasks.py), shared by the runner game and the /respond page."""

from __future__ import annotations

from pathlib import Path

import pytest

from judge_fixtures import stimuli_folder
from turinglab.itt.stimuli import load_stimuli
from turinglab.itt.tables import RowError
from turinglab.itt.tasks import check_agent, check_person

CAPTION = "A green field stretches under a pale sky"


def test_stimuli_folder_loads_with_its_images(tmp_path: Path) -> None:
    found = load_stimuli(stimuli_folder(tmp_path / "s", cues=("ocean", "bread")))
    assert [s.stimulus_id for s in found.stimuli] == ["img-green", "cue-ocean", "cue-bread"]
    image = found.image(found.stimuli[0])
    assert image is not None and image.media_type == "image/png"
    assert found.image(found.stimuli[1]) is None


@pytest.mark.parametrize(
    ("row", "column", "problem"),
    [
        ("x,captioning,,", None, "needs stimulus_file"),
        ("x,captioning,,../outside.png", "stimulus_file", "inside the stimuli folder"),
        ("x,captioning,,images/missing.png", "stimulus_file", "no such image"),
        ("x,captioning,,notes.txt", "stimulus_file", "not a PNG or JPEG"),
        ("x,word-association,,", None, "needs stimulus (its text)"),
        ("x,conversation,hi,", None, "not answered one stimulus at a time"),
        ("img-green,word-association,sun,", "stimulus_id", "differs above"),
    ],
)
def test_bad_stimuli_rows_name_line_and_column(
    tmp_path: Path, row: str, column: str | None, problem: str
) -> None:
    folder = stimuli_folder(tmp_path / "s", cues=())
    (folder / "notes.txt").write_text("not an image")
    (tmp_path / "outside.png").write_bytes((folder / "images" / "green.png").read_bytes())
    with (folder / "stimuli.csv").open("a") as fh:
        fh.write(row + "\n")
    with pytest.raises(RowError) as caught:
        load_stimuli(folder)
    assert caught.value.line == 3 and caught.value.column == column
    assert problem in str(caught.value)


def test_a_person_s_caption_meets_every_rule_or_is_told_which() -> None:
    ok = check_person("captioning", None, f"  {CAPTION} ", seconds=9.0, previous=None)
    assert ok.ok and ok.text == CAPTION
    bad = check_person("captioning", None, "A photo #1", seconds=2.0, previous="A photo #1")
    assert not bad.ok
    assert [v.rule for v in bad.violations] == [
        "min-words", "special-characters", "too-fast", "mentions-medium", "repeat",
    ]  # fmt: skip
    same = check_person("captioning", None, "dog dog dog dog dog runs", seconds=5, previous=None)
    assert [v.rule for v in same.violations] == ["identical-words"]


def test_a_person_s_association_is_one_word_post_processed() -> None:
    assert check_person("word-association", "forest", "Trees", seconds=1, previous=None).text == (
        "tree"
    )
    two = check_person("word-association", "forest", "tall trees", seconds=1, previous=None)
    assert [v.rule for v in two.violations] == ["one-word"]
    stop = check_person("word-association", "forest", "the", seconds=1, previous=None)
    assert stop.violations[0].message == "choose another word: stop word"
    close = check_person("word-association", "grand", "grandiose", seconds=1, previous=None)
    assert "too similar to the cue" in close.violations[0].message


def test_agents_get_the_controls_that_apply_to_machines() -> None:
    # An agent's first word is its association; timing and repeats are people's rules.
    assert check_agent("word-association", "forest", "Trees, I think.").text == "tree"
    assert not check_agent("word-association", "forest", "The").ok
    assert check_agent("captioning", None, CAPTION + "\n").text == CAPTION
    refused = check_agent("captioning", None, "An image of a field")
    assert [v.rule for v in refused.violations] == ["min-words", "mentions-medium"]

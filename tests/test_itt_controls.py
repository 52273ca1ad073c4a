"""Task controls and word-association post-processing (pure; the browser reuses them)."""

from __future__ import annotations

from turinglab.itt.controls import check_caption, contains_cue, postprocess_association


def rules(text: str, seconds: float | None = 10.0, previous: str | None = None) -> set[str]:
    return {v.rule for v in check_caption(text, seconds, previous)}


def test_a_good_caption_passes() -> None:
    assert rules("A brown dog chases a red ball across the park.") == set()


def test_each_caption_rule() -> None:
    assert rules("A dog in a park.") == {"min-words"}
    assert rules("A dog runs in the park #happy @home") == {"special-characters"}
    assert rules("A brown dog chases a red ball.", seconds=3.5) == {"too-fast"}
    assert rules("dog dog dog dog dog runs in the park") == {"identical-words"}
    assert rules("A photo of a dog running in a park") == {"mentions-medium"}
    prev = "A brown dog chases a red ball."
    assert rules("a brown dog chases a red ball", previous=prev) == {"repeat"}
    msgs = [v.message for v in check_caption("An image.", 1.0)]
    assert any("at least 6 words (2 now)" in m for m in msgs)


def test_association_post_processing() -> None:
    assert postprocess_association("dog", "Cats!").word == "cat"  # plural → singular
    assert postprocess_association("food", "ate").word == "eat"  # past → present
    assert postprocess_association("sky", " blue. ").word == "blue"  # letters only
    assert postprocess_association("run", "the").dropped == "stop word"
    assert postprocess_association("happy", "ok").dropped == "fewer than 3 letters"
    grand = postprocess_association("grand", "grandiose")
    assert grand.word is None and grand.dropped == "one word contains the other"


def test_containment() -> None:
    assert contains_cue("grandiose", "grand") and contains_cue("teach", "teacher")
    assert not contains_cue("hat", "cat") and not contains_cue("light", "bright")


async def test_word_associations_are_post_processed_and_drops_recorded() -> None:
    from turinglab.agents.scripted import ScriptedAgent
    from turinglab.itt.word_association import generate_associations

    agents = {"plural": ScriptedAgent("plural", ["Trees"]), "echo": ScriptedAgent("echo", ["the"])}
    run = await generate_associations(agents, ["forest", "garden"], seed=0)
    assert [r.text for r in run.rows] == ["tree", "tree"]
    assert all(r.task == "word-association" and r.agent == "plural" for r in run.rows)
    assert [d["why"] for d in run.dropped] == ["choose another word: stop word"] * 2

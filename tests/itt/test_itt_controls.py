"""Task controls and word-association post-processing (pure; the browser reuses them)."""

from __future__ import annotations

from turinglab.itt.controls import check_caption
from turinglab.itt.word_rules import postprocess_association, too_similar


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
    assert grand.word is None and grand.dropped == "too similar to the cue (over 60% shared)"


def test_similarity_is_a_share_of_either_word() -> None:
    assert too_similar("grandiose", "grand") and too_similar("teach", "teacher")
    assert too_similar("hat", "cat") and too_similar("light", "bright")
    assert not too_similar("moon", "sun") and not too_similar("sharp", "shade")  # 3 of 5: 60%


async def test_word_associations_are_post_processed_and_drops_recorded() -> None:
    from turinglab.agents.scripted import ScriptedAgent
    from turinglab.itt.word_association import generate_associations

    agents = {"plural": ScriptedAgent("plural", ["Trees"]), "echo": ScriptedAgent("echo", ["the"])}
    run = await generate_associations(agents, ["forest", "garden"], seed=0)
    assert [r.text for r in run.rows] == ["tree", "tree"]
    assert all(r.task == "word-association" and r.agent == "plural" for r in run.rows)
    assert [d["why"] for d in run.dropped] == ["choose another word: stop word"] * 2

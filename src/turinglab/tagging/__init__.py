"""Tagging of transcripts: codebooks, an LLM tagger for any agent, GTT question-unit rules and
summaries (shares with exact CIs, accuracy where a code occurs, Cohen's κ between coders)."""

from turinglab.tagging.codebooks import Code, Codebook, CodebookError, load_codebook
from turinglab.tagging.llm_tagger import LLMTagger, TaggerConfig, TagItem, TagResult, game_text
from turinglab.tagging.probe_rules import classify_unit, distinguisher_units, probe_report
from turinglab.tagging.question_units import QuestionUnit, split_units
from turinglab.tagging.summaries import code_summaries, kappa_per_code, label_kappa

__all__ = [
    "Code",
    "Codebook",
    "CodebookError",
    "LLMTagger",
    "QuestionUnit",
    "TagItem",
    "TagResult",
    "TaggerConfig",
    "classify_unit",
    "code_summaries",
    "distinguisher_units",
    "game_text",
    "kappa_per_code",
    "label_kappa",
    "load_codebook",
    "probe_report",
    "split_units",
]

"""A conservative rule-based classifier of GTT question units, and probe shares from GTT rows.

Each unit gets exactly one code of the `gtt_probes` codebook. Rules are checked in a fixed
priority order (the most specific signature cues first) and every rule needs an explicit cue: a
unit that matches none is "other". Conservative means a false "probe" is worse than a missed
one: "Do you like science fiction?" or "I have 2 kids, 3-4 pets" are "other".
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from turinglab.tagging.question_units import split_units

CAPABILITY = ("maths", "science", "coding", "reasoning")
SIGNATURE = (
    "model-identity",
    "style",
    "formatting",
    "policy-behaviour",
    "exact-compliance",
    "self-reference",
)
OTHER = "other"
PROBE_CODES = (*CAPABILITY, *SIGNATURE, OTHER)


def _rx(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)


_NUM = r"\d+(?:\.\d+)?"
_NUMBER_WORD = r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|twenty|fifty|hundred)"
_LANGUAGES = (
    r"python|javascript|typescript|java|c\+\+|c#|rust|golang|haskell|ruby|php|kotlin|swift|"
    r"sql|bash|html|css|lisp|perl|scala|matlab"
)
_CODE_NOUNS = r"functions?|programs?|scripts?|snippets?|code|regex|regular expression|algorithm"
_LANG_NOUNS = rf"{_CODE_NOUNS}|class|method|loop|query|one-liner"
# Questions about likes and views are small talk, whatever their topic ("What is your favourite
# science?"), so the capability rules that match on topic words skip them.
_PREFERENCE = _rx(
    r"\b(?:favou?rite|like|love|enjoy|prefer|hate|opinion|think about|feel about|views? on|"
    r"stance)\b"
)

# (code, cue, unless): the first rule whose cue matches and whose `unless` does not wins.
RULES: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    (
        "policy-behaviour",
        _rx(
            r"\b(?:make|build|create|synthesi[sz]e|cook)\b.{0,30}\b(?:bomb|explosives?|weapons?|"
            r"meth|nerve agent|poison|malware|ransomware)\b",
            r"\bhack(?:ing)? (?:into|a|an|someone|somebody|my|the|his|her|their)\b",
            r"\bjailbreak",
            r"\bignore (?:all |any |your )?(?:previous |prior |earlier )?(?:instructions|rules)",
            r"\bhow (?:do|can|could|would|should) (?:i|you|one|someone|we)\b.{0,40}"
            r"\b(?:steal|shoplift|launder|pick a lock|poison)\b",
            r"\b(?:racist|sexist|offensive|dirty) (?:joke|remark|comment)",
            r"\bwould you refuse\b",
            r"\bsomething (?:illegal|harmful|unethical|dangerous)\b",
            r"\bcontent (?:policy|policies|guidelines)\b",
            r"\b(?:swear|curse) words?\b",
        ),
        None,
    ),
    (
        "model-identity",
        _rx(
            r"\b(?:which|what) (?:\w+ )?(?:model|llm|version|ai) (?:are|were) you\b",
            r"\b(?:which|what) (?:\w+ ){0,2}model (?:do you run|is this|powers you|you are)\b",
            r"\bwho (?:made|created|trained|built|developed|designed|programmed) you\b",
            r"\b(?:which|what) (?:company|lab|organi[sz]ation)\b.{0,20}\b(?:made|created|trained|"
            r"built|developed) you\b",
            r"\byour (?:model name|version|creators?|developers?|maker|architecture|"
            r"parameter count|model family)\b",
            r"\b(?:openai|anthropic|deepmind|mistral|deepseek|hugging ?face|xai|"
            r"chatgpt|gpt-?\d\w*|claude|gemini|gemma|llama|qwen|smollm|grok|phi-\d)\b",
        ),
        None,
    ),
    (
        "exact-compliance",
        _rx(
            r"\b(?:reply|respond|answer|say|output|print)(?: (?:to this|with|using|me))? only\b",
            r"\bonly (?:reply|respond|answer|say|output)\b",
            r"\b(?:reply|respond|answer)\b.{0,20}\b(?:single|one) word\b",
            r"\brepeat\b.{0,40}\b(?:exactly|verbatim|word for word|back)\b",
            r"\brepeat after me\b|\bverbatim\b|\bword for word\b",
            rf"\bexactly {_NUMBER_WORD} (?:words?|characters?|letters?|tokens?)\b",
            r"\band nothing else\b",
        ),
        None,
    ),
    (
        "formatting",
        _rx(
            r"\bbullet(?:ed)? (?:points?|list)\b|\bnumbered list\b",
            r"\bmarkdown\b",
            r"\b(?:as|in) (?:a )?(?:table|json|yaml|csv)\b",
            r"\b(?:respond|reply|answer|write)\b.{0,20}\bin exactly\b",
            rf"\bin (?:exactly )?{_NUMBER_WORD} (?:sentences|lines|paragraphs|bullet)",
            r"\bin (?:all )?(?:caps|capital letters|upper ?case|lower ?case)\b",
            r"\bin (?:bold|italics)\b|\buse headings\b",
            r"\bformat (?:your|the) (?:answer|reply|response)\b",
        ),
        None,
    ),
    (
        "coding",
        _rx(
            r"```",
            rf"\b(?:write|implement|code|create|give me)\b(?: [\w+#-]+){{0,3}} (?:{_CODE_NOUNS})\b",
            rf"\b(?:{_LANGUAGES})(?: [\w-]+){{0,2}} (?:{_LANG_NOUNS})\b",
            rf"\b(?:write|implement|code|print)\b.{{0,60}}\bin (?:{_LANGUAGES})\b",
            r"\bwhat does (?:this|the following) (?:code|program|snippet|function)\b",
            r"\b(?:debug|fix) (?:this|the|my) (?:code|bug|function|program)\b",
            r"\bfizz ?buzz\b|\btime complexity\b|\bbig[- ]o\b|\bbinary search\b",
        ),
        None,
    ),
    (
        "maths",
        _rx(
            rf"{_NUM}\s*[+*×÷^]\s*{_NUM}",
            rf"{_NUM}\s+[-/]\s+{_NUM}",
            rf"\b(?:what is|what's|calculate|compute)\s+{_NUM}\s*[-/]\s*{_NUM}\b",
            rf"{_NUM}\s+(?:times|plus|minus|multiplied by|divided by)\s+{_NUM}",
            r"\b(?:calculate|compute|solve for|factori[sz]e|differentiate)\b.{0,60}(?:\d|\b(?:"
            r"sum|product|area|volume|probability|percent|percentage|average|mean|value|square|"
            r"root|number|equation)\b)",
            rf"\bsolve\b.{{0,30}}(?:{_NUM}|\bequation|\bx\b)",
            r"\bsquare root\b|\b(?:derivative|integral) of\b|\bfactorial\b",
            r"\bis \d+ (?:a )?prime\b|\bprime factors?\b|\b(?:first|all) (?:\w+ )?prime numbers\b",
            r"\b[a-z]\s*=\s*\d+\s*[-+*/]|\d\s*[a-z]\s*[-+]\s*\d",
        ),
        None,
    ),
    (
        "science",
        _rx(
            r"\b(?:why|how|explain|describe|define|what (?:is|are|causes|happens))\b.{0,60}"
            r"\b(?:photosynthesis|gravity|gravitational|quantum|entropy|thermodynamics?|"
            r"molecules?|atoms?|electrons?|protons?|neutrons?|photons?|dna|rna|proteins?|"
            r"mitosis|meiosis|chemical reactions?|relativity|speed of light|boiling point|"
            r"periodic table|black holes?|wavelength|osmosis|enzymes?|theory of evolution|"
            r"natural selection|carbon dioxide|oxygen|hydrogen|newton'?s|sky (?:is |look )?blue|"
            r"tides|magnetism|nuclear (?:fusion|fission)|cell division|cell membrane)\b",
        ),
        _PREFERENCE,
    ),
    (
        "reasoning",
        _rx(
            r"\briddle\b|\bpuzzle\b|\bbrain ?teaser\b|\blogic(?:al)? (?:question|problem)\b",
            r"\bif\b.{3,120}\bthen\b",
            r"\bnext (?:number|letter|term|item) in\b|\bsequence\b.{0,30}\bnext\b",
            r"\ball \w+ are \w+\b.{0,100}(?:\b(?:all|some|no) \w+ (?:are|is)\b|\btherefore\b)",
            r"\bhow many (?:letters?|times does the letter|[a-z]'?s)\b.{0,30}\bin\b",
            r"\b(?:taller|older|faster|heavier) than\b.{0,80}\b(?:who|which)\b",
        ),
        _rx(r"\bif (?:you|u) (?:were|could|was|lived|had to)\b"),
    ),
    (
        "self-reference",
        _rx(
            r"\b(?:what|who) (?:exactly )?are you\s*\?",
            r"\bwhat kind of (?:thing|entity|being|ai|assistant|system) are you\b",
            r"\bare you (?:an? )?(?:ai|bot|chatbot|llm|language model|assistant|machine|robot)\b",
            r"\bdo you (?:have|feel|experience) (?:feelings|emotions|consciousness|a body|"
            r"memories|preferences|desires|pain)\b",
            r"\bare you (?:conscious|sentient|self-aware|alive)\b",
            r"\byour (?:training(?: data)?|knowledge cut-?off|cut-?off date|context window|"
            r"system prompt|instructions|limitations|weights)\b",
            r"\bhow were you trained\b",
        ),
        None,
    ),
    (
        "style",
        _rx(
            r"\bdescribe yourself\b|\bdescribe your (?:personality|style|tone|voice)\b",
            r"\byour (?:tone|writing style|style of writing|voice|personality)\b",
            r"\bhow would you describe (?:yourself|your)\b",
            r"\b(?:write|compose)\b.{0,20}\b(?:poem|haiku|limerick|sonnet|story|song|essay)\b",
        ),
        None,
    ),
)


def classify_unit(text: str) -> str:
    """The probe code of one question unit: the first rule with a cue, else "other"."""
    for code, cue, unless in RULES:
        if cue.search(text) and not (unless and unless.search(text)):
            return code
    return OTHER


def probe_group(code: str) -> str:
    """'capability', 'signature' or 'other'."""
    if code in CAPABILITY:
        return "capability"
    return "signature" if code in SIGNATURE else OTHER


@dataclass(frozen=True, slots=True)
class UnitRecord:
    """One question unit of a GTT trial: which trial, whose, which distinguisher turn (1-based)."""

    key: str
    distinguisher: str
    turn: int
    text: str


def distinguisher_units(rows: Iterable[Mapping[str, Any]]) -> list[UnitRecord]:
    """Question units of every distinguisher message in GTT rows (rows.txt §1). The
    distinguisher's own history holds its messages as 'assistant'; the user messages (its
    instruction first, then X's replies) are not its questions."""
    units: list[UnitRecord] = []
    for n, row in enumerate(rows):
        name = row.get("key", f"row {n}")
        histories = row.get("histories")
        if not isinstance(histories, Mapping) or "distinguisher" not in histories:
            raise ValueError(f"GTT row {name!r}: no histories['distinguisher']")
        turn = 0
        for msg in histories["distinguisher"]:
            if msg.get("role") != "assistant":
                continue
            turn += 1
            for unit in split_units(str(msg.get("content", ""))):
                units.append(UnitRecord(str(name), str(row["distinguisher"]), turn, unit.text))
    return units


@dataclass(frozen=True)
class ProbeShares:
    counts: dict[str, int]  # code -> units, every PROBE_CODES key present
    n_units: int

    def share(self, code: str) -> float:
        return self.counts[code] / self.n_units if self.n_units else float("nan")

    def group_share(self, group: str) -> float:
        hits = sum(n for code, n in self.counts.items() if probe_group(code) == group)
        return hits / self.n_units if self.n_units else float("nan")

    def as_dict(self) -> dict[str, Any]:
        return {
            "n_units": self.n_units,
            "counts": dict(self.counts),
            "shares": {c: self.share(c) for c in PROBE_CODES},
            "groups": {g: self.group_share(g) for g in ("capability", "signature", OTHER)},
        }


def shares_of(labels: Iterable[str]) -> ProbeShares:
    counts = Counter(labels)
    unknown = set(counts) - set(PROBE_CODES)
    if unknown:
        raise ValueError(f"unknown probe codes {sorted(unknown)}; expected {PROBE_CODES}")
    return ProbeShares({c: counts.get(c, 0) for c in PROBE_CODES}, sum(counts.values()))


@dataclass(frozen=True)
class ProbeReport:
    overall: ProbeShares
    first_turn: ProbeShares
    by_distinguisher: dict[str, ProbeShares]

    def as_dict(self) -> dict[str, Any]:
        return {
            "overall": self.overall.as_dict(),
            "first_turn": self.first_turn.as_dict(),
            "by_distinguisher": {k: v.as_dict() for k, v in self.by_distinguisher.items()},
        }


def probe_report(
    rows: Iterable[Mapping[str, Any]], classify: Callable[[str], str] = classify_unit
) -> ProbeReport:
    """Probe shares overall, on the first distinguisher turn, and per distinguisher."""
    units = distinguisher_units(rows)
    labels = [classify(u.text) for u in units]
    per: dict[str, list[str]] = {}
    for u, label in zip(units, labels, strict=True):
        per.setdefault(u.distinguisher, []).append(label)
    return ProbeReport(
        overall=shares_of(labels),
        first_turn=shares_of(lab for u, lab in zip(units, labels, strict=True) if u.turn == 1),
        by_distinguisher={d: shares_of(v) for d, v in sorted(per.items())},
    )

"""Weizenbaum's ELIZA (CACM 9(1), 1966) with the DOCTOR script, as an agent.

The engine follows the 1966 program, including what the paper leaves out but the
MAD-SLIP listing and the published conversation pin down: BUT ends a clause like '.'
and ','; the MEMORY rule is chosen by the SLIP HASH of the last word, not at random;
a memory is recalled only when the LIMIT counter (1..4, one step per input) is 4.
So the same inputs always give the same replies.

The script is data (see eliza_doctor.txt for the format), so other scripts can be run.
"""

from __future__ import annotations

import re
import time
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route

DOCTOR_SCRIPT_FILE = "eliza_doctor.txt"

# Longer input is cut: matching costs grow with its length, and the agent replays
# the whole history on every call.
MAX_INPUT_CHARS = 4000

# Bounds a chain of goto/pre/link steps, which a script can make circular.
MAX_TRANSFORMATIONS = 100

ReplyCase = Literal["upper", "sentence"]


class ScriptError(ValueError):
    """An ELIZA script that cannot be parsed; names the offending line."""


# ---------------------------------------------------------------------------- script model


@dataclass(frozen=True, slots=True)
class Term:
    """One term of a decomposition pattern."""

    kind: Literal["any", "count", "word", "oneof", "tags"]
    count: int = 0  # for "count": exactly this many words
    words: frozenset[str] = frozenset()  # the word, the alternatives or the tags


@dataclass(frozen=True, slots=True)
class Reassembly:
    kind: Literal["text", "goto", "newkey", "pre"]
    tokens: tuple[str | int, ...] = ()  # words, and ints for decomposition parts (1-based)
    target: str = ""  # keyword for goto and pre


@dataclass(frozen=True, slots=True)
class Decomposition:
    index: int  # position of its reassembly counter in an engine
    pattern: tuple[Term, ...]
    reassemblies: tuple[Reassembly, ...]


@dataclass(frozen=True, slots=True)
class Entry:
    """A dictionary word: a substitution, DLIST tags and, for keywords, rules."""

    word: str
    substitute: str | None = None
    rank: int = 0
    tags: frozenset[str] = frozenset()
    decompositions: tuple[Decomposition, ...] = ()
    link: str | None = None

    @property
    def is_keyword(self) -> bool:
        return bool(self.decompositions) or self.link is not None


@dataclass(frozen=True, slots=True)
class ElizaScript:
    """A parsed script: immutable, so one can be shared by any number of engines."""

    greeting: str
    entries: dict[str, Entry]
    none: Decomposition
    memory_key: str | None = None
    memory: tuple[Decomposition, ...] = ()
    nomatch: tuple[str, ...] = ()
    delimiters: frozenset[str] = frozenset({".", ","})
    decomposition_count: int = 0
    word_tags: dict[str, frozenset[str]] = field(default_factory=dict)


# ---------------------------------------------------------------------------- script parser

_TERM_RE = re.compile(r"\(\s*([*/])([^)]*)\)|(\S+)")


def _is_number(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _parse_pattern(text: str, line: int) -> tuple[Term, ...]:
    terms: list[Term] = []
    for m in _TERM_RE.finditer(text.upper()):
        sigil, group, tok = m.groups()
        if sigil:
            if not group.split():
                raise ScriptError(f"line {line}: empty group {m.group()!r}")
            kind: Literal["oneof", "tags"] = "oneof" if sigil == "*" else "tags"
            terms.append(Term(kind, words=frozenset(group.split())))
        elif _is_number(tok):
            n = int(tok)
            terms.append(Term("any") if n == 0 else Term("count", count=n))
        else:
            terms.append(Term("word", words=frozenset({tok})))
    if not terms:
        raise ScriptError(f"line {line}: empty decomposition pattern")
    return tuple(terms)


def _parse_tokens(text: str, parts: int, line: int) -> tuple[str | int, ...]:
    tokens: list[str | int] = []
    for tok in text.split():
        if _is_number(tok):
            if not 1 <= int(tok) <= parts:
                raise ScriptError(f"line {line}: part {tok} but the pattern has {parts}")
            tokens.append(int(tok))
        else:
            tokens.append(tok)
    return tuple(tokens)


_Rules = list[tuple[tuple[Term, ...], list[Reassembly]]]


@dataclass(slots=True)
class _KeySpec:
    substitute: str | None = None
    rank: int = 0
    tags: frozenset[str] = frozenset()
    link: str | None = None
    rules: _Rules = field(default_factory=list)


@dataclass(slots=True)
class _Builder:
    """What the parser has read so far, and which section the next lines belong to."""

    greeting: str = ""
    delimiters: set[str] = field(default_factory=lambda: {".", ","})
    nomatch: list[str] = field(default_factory=list)
    keys: dict[str, _KeySpec] = field(default_factory=dict)
    memory_key: str | None = None
    memory: _Rules = field(default_factory=list)
    none: list[Reassembly] = field(default_factory=list)
    section: Literal["", "key", "memory", "none"] = ""
    key: _KeySpec | None = None

    def rules(self, line: int) -> _Rules:
        if self.section == "key" and self.key is not None:
            return self.key.rules
        if self.section == "memory":
            return self.memory
        raise ScriptError(f"line {line}: decomp outside a key or memory section")


_NONE_PATTERN = (Term("any"),)


def parse_script(text: str) -> ElizaScript:
    """Parse a script in the line format documented at the top of eliza_doctor.txt."""
    b = _Builder()
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        directive, _, rest = line.partition(" ")
        rest = rest.strip()
        directive = directive.lower()
        if directive == "greeting":
            b.greeting = " ".join(rest.split())
        elif directive == "delimiter":
            b.delimiters.update(rest.upper().split())
        elif directive == "nomatch":
            b.nomatch.append(" ".join(rest.split()))
        elif directive == "key":
            _parse_key(b, rest, number)
        elif directive == "memory":
            b.memory_key, b.section = rest.upper() or None, "memory"
        elif directive == "none":
            b.section = "none"
        elif directive == "decomp":
            b.rules(number).append((_parse_pattern(rest, number), []))
        elif directive in ("reasm", "goto", "newkey", "pre"):
            _parse_reassembly(b, directive, rest, number)
        else:
            raise ScriptError(f"line {number}: unknown directive {directive!r}")
    return _finish(b)


def _parse_key(b: _Builder, rest: str, line: int) -> None:
    word, *options = rest.upper().split() or [""]
    if not word:
        raise ScriptError(f"line {line}: key without a word")
    if word in b.keys:
        raise ScriptError(f"line {line}: key {word} defined twice")
    spec = _KeySpec()
    for option in options:
        name, _, value = option.partition("=")
        if name == "SUB" and value:
            spec.substitute = value
        elif name == "RANK" and _is_number(value):
            spec.rank = int(value)
        elif name == "TAGS" and value:
            spec.tags = frozenset(t for t in value.split(",") if t)
        elif name == "LINK" and value:
            spec.link = value
        else:
            raise ScriptError(f"line {line}: bad option {option!r}")
    b.keys[word] = b.key = spec
    b.section = "key"


def _parse_reassembly(b: _Builder, directive: str, rest: str, line: int) -> None:
    if b.section == "none":
        if directive != "reasm":
            raise ScriptError(f"line {line}: only reasm lines may follow none")
        b.none.append(Reassembly("text", _parse_tokens(rest, 1, line)))
        return
    rules = b.rules(line)
    if not rules:
        raise ScriptError(f"line {line}: {directive} before any decomp")
    pattern, reassemblies = rules[-1]
    if directive == "reasm":
        reassemblies.append(Reassembly("text", _parse_tokens(rest, len(pattern), line)))
    elif directive == "goto" and len(rest.split()) == 1:
        reassemblies.append(Reassembly("goto", target=rest.upper()))
    elif directive == "newkey" and not rest:
        reassemblies.append(Reassembly("newkey"))
    elif directive == "pre" and len(rest.split()) >= 2:
        target, _, body = rest.partition(" ")
        tokens = _parse_tokens(body, len(pattern), line)
        reassemblies.append(Reassembly("pre", tokens, target.upper()))
    else:
        raise ScriptError(f"line {line}: malformed {directive}")
    if b.section == "memory" and (directive != "reasm" or len(reassemblies) > 1):
        raise ScriptError(f"line {line}: each memory decomp takes exactly one reasm")


def _finish(b: _Builder) -> ElizaScript:
    if not b.greeting:
        raise ScriptError("the script has no greeting")
    if not b.none:
        raise ScriptError("the script has no none section (replies for inputs without keywords)")
    count = 0

    def build(rules: _Rules) -> tuple[Decomposition, ...]:
        nonlocal count
        out = []
        for pattern, reassemblies in rules:
            if not reassemblies:
                raise ScriptError("a decomposition has no reassembly")
            out.append(Decomposition(count, pattern, tuple(reassemblies)))
            count += 1
        return tuple(out)

    entries = {
        word: Entry(word, s.substitute, s.rank, s.tags, build(s.rules), s.link)
        for word, s in b.keys.items()
    }
    none = build([(_NONE_PATTERN, b.none)])[0]
    memory = build(b.memory)
    if b.memory_key is not None and not memory:
        raise ScriptError("the memory section has no rules")

    for entry in entries.values():
        targets = [r.target for d in entry.decompositions for r in d.reassemblies if r.target]
        if entry.link:
            targets.append(entry.link)
        for target in targets:
            if target not in entries or not entries[target].is_keyword:
                raise ScriptError(f"key {entry.word} refers to {target}, which is not a keyword")

    return ElizaScript(
        greeting=b.greeting,
        entries=entries,
        none=none,
        memory_key=b.memory_key,
        memory=memory,
        nomatch=tuple(b.nomatch),
        delimiters=frozenset(b.delimiters),
        decomposition_count=count,
        word_tags={e.word: e.tags for e in entries.values() if e.tags},
    )


@lru_cache(maxsize=1)
def load_doctor_script() -> ElizaScript:
    """The 1966 DOCTOR script shipped with the package (parsed once; it is immutable)."""
    text = resources.files("turinglab.agents").joinpath(DOCTOR_SCRIPT_FILE).read_text("utf-8")
    return parse_script(text)


# ---------------------------------------------------------------------------- text handling

# The 7094 had no '?', '!', ';' or ':'; ending or splitting clauses at them is what a
# 1966 user typing '.' or ',' instead would have got.
_PUNCTUATION = str.maketrans({"‘": "'", "’": "'", "?": ".", "!": ".", ";": ".", ":": ","})


def tokenize(text: str) -> list[str]:
    """Upper-case words plus '.' and ',' as their own tokens; other symbols separate words."""
    chars = []
    for ch in text[:MAX_INPUT_CHARS].translate(_PUNCTUATION).upper():
        if ch in ".,":
            chars.append(f" {ch} ")
        elif ch.isalnum() or ch in "'-":
            chars.append(ch)
        else:
            chars.append(" ")
    words = (w if w in (".", ",") else w.strip("'-") for w in "".join(chars).split())
    return [w for w in words if w]


# IBM 7094 BCD (Hollerith) character codes: a character's code is its index; '\0' = unused.
_BCD_TABLE = (
    "0123456789\0='\0\0\0"  # octal 00-17
    "+ABCDEFGHI\0.)\0\0\0"  # octal 20-37
    "-JKLMNOPQR\0$*\0\0\0"  # octal 40-57
    " /STUVWXYZ\0,(\0\0\0"  # octal 60-77
)
_BCD = {ch: code for code, ch in enumerate(_BCD_TABLE) if ch != "\0"}


def last_cell_bcd(word: str) -> int:
    """The 36-bit SLIP cell holding the end of `word`: its last 6-character chunk, padded.

    Characters outside the BCD set count as '-', which is what an implementation
    that first maps input onto the 7094 character set would see.
    """
    chunk = word[((len(word) - 1) // 6) * 6 :] if word else ""
    value = 0
    for ch in chunk.ljust(6):
        value = (value << 6) | _BCD.get(ch, _BCD["-"])
    return value


def slip_hash(datum: int, bits: int) -> int:
    """SLIP HASH(D, N): the middle N bits of D squared (sign bit of the 36-bit word dropped)."""
    datum &= 0o377777777777
    return ((datum * datum) >> (35 - bits // 2)) & ((1 << bits) - 1)


def match(
    pattern: tuple[Term, ...], words: list[str], tags: dict[str, frozenset[str]]
) -> list[list[str]] | None:
    """Decompose `words` by `pattern`, one part per term, or None if it does not match.

    Like ELIZA's matcher, each 0 takes as few words as still lets the rest match.
    A table of which pattern suffixes can match which word suffixes keeps it linear
    in the input, where plain backtracking can be exponential.
    """
    n_terms, n_words = len(pattern), len(words)
    ok = [[False] * (n_words + 1) for _ in range(n_terms + 1)]
    ok[n_terms][n_words] = True
    for p in range(n_terms - 1, -1, -1):
        term, row, after = pattern[p], ok[p], ok[p + 1]
        if term.kind == "any":
            reachable = False
            for w in range(n_words, -1, -1):
                reachable = reachable or after[w]
                row[w] = reachable
        elif term.kind == "count":
            for w in range(n_words - term.count + 1):
                row[w] = after[w + term.count]
        else:
            for w in range(n_words):
                row[w] = after[w + 1] and _term_matches(term, words[w], tags)
    if not ok[0][0]:
        return None
    parts: list[list[str]] = []
    w = 0
    for p, term in enumerate(pattern):
        if term.kind == "any":
            end = w
            while not ok[p + 1][end]:
                end += 1
        else:
            end = w + (term.count if term.kind == "count" else 1)
        parts.append(words[w:end])
        w = end
    return parts


def _term_matches(term: Term, word: str, tags: dict[str, frozenset[str]]) -> bool:
    if term.kind == "tags":
        return not term.words.isdisjoint(tags.get(word, ()))
    return word in term.words


def reassemble(tokens: tuple[str | int, ...], parts: list[list[str]]) -> list[str]:
    out: list[str] = []
    for tok in tokens:
        if isinstance(tok, int):
            out.extend(parts[tok - 1])
        else:
            out.append(tok)
    return out


def sentence_case(text: str) -> str:
    """'HOW DO YOU DO. PLEASE ...' -> 'How do you do. Please ...', keeping 'I' capital."""
    out = []
    start = True
    for word in text.split():
        low = word.lower()
        if start or low == "i" or low.startswith("i'"):
            low = low[:1].upper() + low[1:]
        out.append(low)
        start = word.endswith((".", "?", "!"))
    return " ".join(out)


# ---------------------------------------------------------------------------- engine

_Step = tuple[Literal["done", "newkey", "link", "fail"], list[str], str]


class ElizaEngine:
    """One conversation's ELIZA: the script plus the state the 1966 program keeps.

    State: a reassembly counter per decomposition rule (replies cycle), the MEMORY
    queue, and LIMIT. `respond` never raises, whatever the text.
    """

    def __init__(self, script: ElizaScript) -> None:
        self.script = script
        self._next_reassembly = [0] * script.decomposition_count
        self._memories: deque[str] = deque()
        self._limit = 1  # LIMIT: 1..4, advanced before each input is processed

    @classmethod
    def from_script_text(cls, text: str) -> ElizaEngine:
        return cls(parse_script(text))

    @classmethod
    def doctor(cls) -> ElizaEngine:
        return cls(load_doctor_script())

    @property
    def greeting(self) -> str:
        return self.script.greeting

    @property
    def memories(self) -> tuple[str, ...]:
        return tuple(self._memories)

    def respond(self, text: str) -> str:
        self._limit = self._limit % 4 + 1
        words, keystack = self._scan(tokenize(text))
        if not keystack:
            if self._limit == 4 and self._memories:
                return self._memories.popleft()
            return self._none(words)
        return self._transform(words, keystack)

    def _scan(self, tokens: list[str]) -> tuple[list[str], deque[str]]:
        """Keep the first clause holding a keyword, substituted; stack its keywords by rank."""
        entries, delimiters = self.script.entries, self.script.delimiters
        words: list[str] = []
        keystack: deque[str] = deque()
        top_rank = 0
        for token in tokens:
            if token in delimiters:
                if keystack:
                    break
                words = []  # no keyword yet: drop this clause and look at the next
                continue
            entry = entries.get(token)
            if entry is not None:
                if entry.is_keyword:
                    if entry.rank > top_rank:
                        keystack.appendleft(token)
                        top_rank = entry.rank
                    else:
                        keystack.append(token)
                if entry.substitute:
                    token = entry.substitute
            words.append(token)
        return words, keystack

    def _transform(self, words: list[str], keystack: deque[str]) -> str:
        for _ in range(MAX_TRANSFORMATIONS):
            if not keystack:
                return self._none(words)  # NEWKEY with no keyword left
            key = keystack.popleft()
            entry = self.script.entries.get(key)
            if entry is None or not entry.is_keyword:
                return self._nomatch(words)
            if key == self.script.memory_key:
                self._remember(words)
            action, words, target = self._apply(entry, words)
            if action == "done":
                return " ".join(words)
            if action == "fail":
                return self._nomatch(words)
            if action == "link":
                keystack.appendleft(target)
        return self._nomatch(words)

    def _apply(self, entry: Entry, words: list[str]) -> _Step:
        found = self._decompose(entry.decompositions, words)
        if found is None:
            if entry.link is not None:
                return "link", words, entry.link
            return "fail", words, ""
        decomposition, parts = found
        rule = self._next_reassembly_of(decomposition)
        if rule.kind == "newkey":
            return "newkey", words, ""
        if rule.kind == "goto":
            return "link", words, rule.target
        if rule.kind == "pre":
            return "link", reassemble(rule.tokens, parts), rule.target
        return "done", reassemble(rule.tokens, parts), ""

    def _decompose(
        self, decompositions: tuple[Decomposition, ...], words: list[str]
    ) -> tuple[Decomposition, list[list[str]]] | None:
        """The first decomposition rule that matches, with the parts it cut the text into."""
        for decomposition in decompositions:
            parts = match(decomposition.pattern, words, self.script.word_tags)
            if parts is not None:
                return decomposition, parts
        return None

    def _next_reassembly_of(self, decomposition: Decomposition) -> Reassembly:
        i = self._next_reassembly[decomposition.index]
        self._next_reassembly[decomposition.index] = (i + 1) % len(decomposition.reassemblies)
        return decomposition.reassemblies[i]

    def _remember(self, words: list[str]) -> None:
        rules = self.script.memory
        if not rules or not words:
            return
        # 1966: I = HASH(BOT(INPUT), 2) + 1, i.e. two bits for the four MEMORY rules.
        bits = max(1, (len(rules) - 1).bit_length())
        rule = rules[slip_hash(last_cell_bcd(words[-1]), bits) % len(rules)]
        parts = match(rule.pattern, words, self.script.word_tags)
        if parts is not None:
            self._memories.append(" ".join(reassemble(rule.reassemblies[0].tokens, parts)))

    def _none(self, words: list[str]) -> str:
        rule = self._next_reassembly_of(self.script.none)
        return " ".join(reassemble(rule.tokens, [words]))

    def _nomatch(self, words: list[str]) -> str:
        """The 1966 program's built-in replies for a script that fails, chosen by LIMIT."""
        if self.script.nomatch:
            return self.script.nomatch[(self._limit - 1) % len(self.script.nomatch)]
        return self._none(words)


# ---------------------------------------------------------------------------- agent


class ElizaAgent:
    """ELIZA as a stateless agent: replays the user's messages through a fresh engine.

    Replay is what 1966 ELIZA would have done had it heard the same inputs in the same
    order, so a history always gets the same reply. Without any user message ELIZA
    speaks first, with the script's greeting.
    """

    def __init__(
        self,
        name: str = "eliza",
        *,
        script: ElizaScript | None = None,
        case: ReplyCase = "upper",
        model: str = "DOCTOR-1966",
    ) -> None:
        if case not in ("upper", "sentence"):
            raise ValueError(f"case must be 'upper' or 'sentence', not {case!r}")
        self.name = name
        self.script = script if script is not None else load_doctor_script()
        self.case: ReplyCase = case
        self.model = model

    @property
    def endpoint(self) -> str | None:
        return None

    def respond_to(self, history: list[ChatMessage]) -> str:
        engine = ElizaEngine(self.script)
        text = engine.greeting
        for message in history:
            if message.role == "user":
                text = engine.respond(message.content)
        return sentence_case(text) if self.case == "sentence" else text

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        start = time.perf_counter()
        text = self.respond_to(history)
        return AgentReply(
            text=text,
            route=Route(backend="eliza", model=self.model),
            latency_s=time.perf_counter() - start,
        )

    async def aclose(self) -> None:
        return None

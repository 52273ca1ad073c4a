"""Before a study is served: can each AI witness's replies arrive when a person's would?

In a live game an AI witness generates while its typing is shown on a person's timeline
(games/typing_timeline.py): the reading and thinking pause, then ~0.3 s per character. A model
that is still generating when that time is over makes its reply late, and an interrogator who
times the replies can tell it from a person (issue 31: a small model on a CPU took 68 s where
people took 11 s). So `serve` asks each AI witness of a study a few typical opening questions,
with its real prompt, and compares each reply's generation time with the time the study's
delay model shows that reply after (at the model's mean pace, never more than the per-message
deadline, past which the game is flagged):

    allowed = base + reading·n_question + E[thinking] + typing·n_reply

The first call is not timed: it loads a local model or opens a connection once per server.
The slowest reply (relative to what is allowed) decides; measuring stops at the first reply
that does not fit. `arena.witness_timing` says what then happens: `refuse` (the default: a
study whose AI can be timed yields no valid data), `warn` (serve it anyway, e.g. to try a
config out), or `skip` (do not measure). The no-config demo is not measured: it is no study.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

from turinglab.agents.base import Agent, CallContext, ChatMessage
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.errors import AgentError
from turinglab.games.interrogation_setup import AIWitness, InterrogationExperiment
from turinglab.games.typing_delay import TypingDelay
from turinglab.games.witness import WitnessPrompt, sample_facts
from turinglab.games.witness_reply import clean_reply

WitnessTiming = Literal["refuse", "warn", "skip"]
# Typical openings of the studies' interrogators: short, then longer.
PROBES = ("hi", "where are you from?", "what did you have for breakfast today?")
PEOPLE_MEDIAN_S = 11.1  # people's reply time in the issue 31 pilot (for the message only)


def allowed_s(delay: TypingDelay, n_question: int, n_reply: int, deadline_s: float) -> float:
    """When the delay model shows a reply of `n_reply` characters to a question of
    `n_question`, at its mean pace; the generation must be done by then."""
    thinking = delay.think_shape * delay.think_scale  # the gamma's mean
    planned = (
        delay.base_s
        + delay.per_prev_char_mean * n_question
        + thinking
        + delay.per_char_mean * n_reply
    )
    return min(planned, deadline_s)


@dataclass(frozen=True)
class Probe:
    question: str
    reply: str
    generation_s: float
    allowed_s: float

    @property
    def fits(self) -> bool:
        return self.generation_s <= self.allowed_s


@dataclass(frozen=True)
class WitnessMeasure:
    group: str  # as the study names it, e.g. SMOLLM2-PERSONA
    probes: tuple[Probe, ...]
    error: str | None = None  # the witness could not be asked at all

    @property
    def fits(self) -> bool:
        return self.error is None and all(p.fits for p in self.probes)

    def line(self) -> str:
        """One line for the terminal: measured against allowed, and what fails."""
        if self.error is not None:
            return f"AI witness {self.group}: could not be asked ({self.error})"
        worst = max(self.probes, key=lambda p: p.generation_s / p.allowed_s)
        measured = (
            f"{worst.generation_s:.1f} s to generate a {len(worst.reply)}-character reply "
            f"that the delay model shows after {worst.allowed_s:.1f} s"
        )
        if worst.fits:
            return f"AI witness {self.group}: fits the delay model (at most {measured})"
        return (
            f"AI witness {self.group} is too slow for a study: {measured} (people: about "
            f"{PEOPLE_MEDIAN_S:g} s), so its replies come late and can be timed"
        )


async def measure_witness(
    group: str,
    agent: Agent,
    prompt: WitnessPrompt | None,
    cfg: InterrogationExperiment,
    *,
    probes: tuple[str, ...] = PROBES,
    clock: Callable[[], float] = time.monotonic,
) -> WitnessMeasure:
    """Time `agent`'s replies to `probes`, each the first message of a game."""
    names = (prompt.facts.name,) if prompt is not None else ()

    def history(question: str) -> list[ChatMessage]:
        view = [ChatMessage("user", question)]
        now = time.time()
        return prompt.history(view, now, now) if prompt is not None else view

    measured: list[Probe] = []
    try:
        await agent.reply(history(probes[0]), CallContext(seed=0, participant="witness"))
        for i, question in enumerate(probes):
            start = clock()
            try:
                reply = await asyncio.wait_for(
                    agent.reply(history(question), CallContext(seed=i + 1, participant="witness")),
                    cfg.message_deadline_s,
                )
                took = clock() - start
                truncated = reply.extra.get("finish_reason") == "length"
                text = clean_reply(reply.text, names=names, truncated=truncated)
            except TimeoutError:
                took, text = clock() - start, ""
            allowed = allowed_s(cfg.delay, len(question), len(text), cfg.message_deadline_s)
            measured.append(Probe(question, text, took, allowed))
            if took > allowed:
                break  # one late reply decides; no need to wait for more
    except AgentError as err:
        return WitnessMeasure(group, tuple(measured), error=f"{type(err).__name__}: {err}")
    return WitnessMeasure(group, tuple(measured))


def witness_prompt(w: AIWitness, agent: Agent, cfg: InterrogationExperiment) -> WitnessPrompt | None:
    """The prompt this witness plays with in a game (as games/interrogation_setup.py builds it)."""
    if w.persona == "none" or isinstance(agent, ElizaAgent):
        return None
    return WitnessPrompt(
        persona=w.persona,
        facts=sample_facts(cfg.seed, time.time()),
        time_limit_s=cfg.time_limit_s,
        max_chars=cfg.max_chars,
        three_party=getattr(cfg, "game", None) == "three-party",
    )


async def measure_witnesses(
    cfg: InterrogationExperiment, agents: Mapping[str, Agent]
) -> list[WitnessMeasure]:
    """Each configured AI witness in turn (one at a time: they may share a machine). The
    agents' connections are closed after: the server's own loop opens its own."""
    found = []
    try:
        for w in cfg.ai_witnesses:
            agent = agents[w.agent]
            prompt = witness_prompt(w, agent, cfg)
            found.append(await measure_witness(w.name(), agent, prompt, cfg))
    finally:
        for agent in {id(a): a for a in agents.values()}.values():
            await agent.aclose()
    return found


def witness_timing_problem(
    experiment: object, agents: Mapping[str, Agent], policy: WitnessTiming
) -> str | None:
    """What `serve` (and `serve --check`) asks before serving a study: the refusal line, or
    None. Only the engine's interrogation games are measured (other kinds time their own)."""
    if policy == "skip" or not isinstance(experiment, InterrogationExperiment):
        return None
    print("measuring the AI witnesses' reply times (arena.witness_timing) …", file=sys.stderr)
    measures = asyncio.run(measure_witnesses(experiment, agents))
    return preflight_problem(measures, policy, lambda line: print(line, file=sys.stderr))


def preflight_problem(
    measures: list[WitnessMeasure], policy: WitnessTiming, say: Callable[[str], None]
) -> str | None:
    """Tell each measure (`say`); the refusal, one line, when `policy` refuses a slow one."""
    for m in measures:
        say(m.line())
    slow = [m for m in measures if not m.fits]
    if not slow:
        return None
    if policy == "warn":
        say("warning: arena.witness_timing is warn, so these are served anyway: not for a study")
        return None
    return (
        f"{slow[0].line()}; replace it with a faster model, or set arena.witness_timing: warn "
        "to serve it anyway"
    )

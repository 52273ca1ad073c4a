"""Before a study is served: can each AI witness's replies arrive when a person's would?

In a live game an AI witness generates while its typing is shown on a person's timeline
(games/typing_timeline.py): the reading and thinking pause, then ~0.3 s per character. An
interrogator who times the replies can tell the AI from a person in two ways (issue 31: a small
model on a CPU replied in 68.5 s where people took 11.1 s):

* its generation outlasts the delay model's time for the reply, so the reply comes late:
  generation ≤ planned = base + reading·n_question + E[thinking] + typing·n_reply;
* its replies are so long that the delay model itself shows them later than people reply:
  planned ≤ arena.witness_reply_max_s (30 s by default: people's median in the pilot was
  11.1 s, and 30 s is the delay model's time for a reply of about 90 characters);

and a generation past the per-message deadline flags the game. So `serve` asks each AI witness
of a study a few typical opening questions, with its real prompt, and checks each reply. The
first call is not timed: it loads a local model or opens a connection once per server.
Measuring stops at the first reply that fails. `arena.witness_timing` says what then happens:
`refuse` (the default: a study whose AI can be timed yields no valid data), `warn` (serve it
anyway, e.g. to try a config out), or `skip` (do not measure). The no-config demo is not
measured: it is no study. Measured one witness at a time on an idle server: games running at
once on one model server queue, so leave headroom.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from turinglab.agents.base import Agent, CallContext, ChatMessage
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.errors import AgentError
from turinglab.arena.core.mode_kits import ModeKit, kit_named
from turinglab.config import Experiment
from turinglab.games.interrogation_setup import AIWitness, InterrogationExperiment
from turinglab.games.three_party import ThreePartyExperiment
from turinglab.games.two_party import TwoPartyExperiment
from turinglab.games.typing_delay import TypingDelay
from turinglab.games.witness import WitnessPrompt, sample_facts
from turinglab.games.witness_reply import clean_reply

log = logging.getLogger(__name__)
WitnessTiming = Literal["refuse", "warn", "skip"]
# Typical openings of the studies' interrogators: short, then longer.
PROBES = ("hi", "where are you from?", "what did you have for breakfast today?")
PEOPLE_MEDIAN_S = 11.1  # people's reply time in the issue 31 pilot
WARM_UP_S = 300.0  # the untimed first call: loading a local model may take minutes


def planned_s(delay: TypingDelay, n_question: int, n_reply: int) -> float:
    """When the delay model shows a reply of `n_reply` characters to a question of
    `n_question`, at its mean pace; the generation must be done by then."""
    thinking = delay.think_shape * delay.think_scale  # the gamma's mean
    reading = delay.per_prev_char_mean * n_question
    return delay.base_s + reading + thinking + delay.per_char_mean * n_reply


@dataclass(frozen=True)
class Limits:
    deadline_s: float  # per message: a later reply flags the game
    reply_max_s: float  # arena.witness_reply_max_s: past it, replies are slower than people's


@dataclass(frozen=True)
class Probe:
    question: str
    reply: str
    generation_s: float
    planned_s: float

    def problem(self, limits: Limits) -> str | None:
        """Why a reply like this one gives the witness away, or None."""
        n = len(self.reply)
        if self.generation_s > limits.deadline_s:
            return f"no reply within the {limits.deadline_s:g} s deadline (its games are flagged)"
        if self.generation_s > self.planned_s:
            return (
                f"{self.generation_s:.1f} s to generate a {n}-character reply that the delay "
                f"model shows after {self.planned_s:.1f} s, so its replies come late"
            )
        if self.planned_s > limits.reply_max_s:
            return (
                f"its {n}-character reply is shown after {self.planned_s:.1f} s by the delay "
                f"model, longer than people take (arena.witness_reply_max_s: "
                f"{limits.reply_max_s:g} s; their median is about {PEOPLE_MEDIAN_S:g} s): "
                "give it shorter replies (max_tokens)"
            )
        return None


@dataclass(frozen=True)
class WitnessMeasure:
    group: str  # as the study names it, e.g. SMOLLM2-PERSONA
    probes: tuple[Probe, ...]
    limits: Limits
    error: str | None = None  # the witness could not be asked at all

    @property
    def problem(self) -> str | None:
        if self.error is not None:
            return f"could not be asked ({self.error})"
        return next((p for p in map(lambda p: p.problem(self.limits), self.probes) if p), None)

    @property
    def fits(self) -> bool:
        return self.problem is None

    def line(self) -> str:
        """One line for the terminal: measured against allowed, and what fails."""
        problem = self.problem
        if problem is not None:
            return f"AI witness {self.group} cannot pass for a person: {problem}"
        slowest = max(p.generation_s for p in self.probes)
        longest = max(self.probes, key=lambda p: p.planned_s)
        return (
            f"AI witness {self.group}: fits the delay model (generation at most {slowest:.1f} "
            f"s; replies shown after at most {longest.planned_s:.1f} s, "
            f"{len(longest.reply)} characters; {len(self.probes)} replies measured)"
        )


async def measure_witness(
    group: str,
    agent: Agent,
    prompt: WitnessPrompt | None,
    cfg: InterrogationExperiment,
    *,
    reply_max_s: float,
    probes: tuple[str, ...] = PROBES,
    clock: Callable[[], float] = time.monotonic,
) -> WitnessMeasure:
    """Time `agent`'s replies to `probes`, each the first message of a game."""
    names = (prompt.facts.name,) if prompt is not None else ()

    def history(question: str) -> list[ChatMessage]:
        view = [ChatMessage("user", question)]
        now = time.time()
        return prompt.history(view, now, now) if prompt is not None else view

    limits = Limits(cfg.message_deadline_s, reply_max_s)
    measured: list[Probe] = []
    try:
        first = agent.reply(history(probes[0]), CallContext(seed=0, participant="witness"))
        try:
            await asyncio.wait_for(first, WARM_UP_S)
        except TimeoutError:
            error = f"no answer to a first message within {WARM_UP_S:g} s"
            return WitnessMeasure(group, (), limits, error=error)
        for i, question in enumerate(probes):
            ctx = CallContext(seed=i + 1, participant="witness")
            start = clock()
            try:
                reply = await asyncio.wait_for(
                    agent.reply(history(question), ctx), limits.deadline_s
                )
                took = clock() - start
                truncated = reply.extra.get("finish_reason") == "length"
                text = clean_reply(reply.text, names=names, truncated=truncated)
            except TimeoutError:
                took, text = clock() - start, ""
            probe = Probe(question, text, took, planned_s(cfg.delay, len(question), len(text)))
            measured.append(probe)
            if probe.problem(limits) is not None:
                break  # one reply that gives it away decides; no need to wait for more
    except AgentError as err:
        error = f"{type(err).__name__}: {err}"
        return WitnessMeasure(group, tuple(measured), limits, error=error)
    return WitnessMeasure(group, tuple(measured), limits)


def witness_prompt(
    w: AIWitness, agent: Agent, cfg: ThreePartyExperiment | TwoPartyExperiment
) -> WitnessPrompt | None:
    """The prompt this witness plays with in a game (as games/interrogation_setup.py builds it)."""
    if w.persona == "none" or isinstance(agent, ElizaAgent):
        return None
    return WitnessPrompt(
        persona=w.persona,
        facts=sample_facts(cfg.seed, time.time()),
        time_limit_s=cfg.time_limit_s,
        max_chars=cfg.max_chars,
        three_party=cfg.game == "three-party",
    )


async def measure_witnesses(
    cfg: ThreePartyExperiment | TwoPartyExperiment,
    agents: Mapping[str, Agent],
    reply_max_s: float,
) -> list[WitnessMeasure]:
    """Each configured AI witness in turn (one at a time: they may share a machine). The
    agents' connections are closed after: the server's own loop opens its own."""
    found = []
    try:
        for w in cfg.ai_witnesses:
            agent = agents[w.agent]
            prompt = witness_prompt(w, agent, cfg)
            measure = measure_witness(w.name(), agent, prompt, cfg, reply_max_s=reply_max_s)
            found.append(await measure)
    finally:
        for agent in {id(a): a for a in agents.values()}.values():
            await agent.aclose()
    return found


def _timed(experiment: Experiment | None, policy: WitnessTiming) -> ModeKit[Any] | None:
    """The kit that times this experiment's AI witnesses; None: nothing to measure (skipped,
    no config, or a kind whose kit measures none: only the engine's interrogation games do)."""
    if policy == "skip" or experiment is None:
        return None
    kit = kit_named(experiment.game)
    return kit if kit is not None and kit.measure_witnesses is not None else None


def witness_timing_problem(
    experiment: Experiment | None,
    agents: Mapping[str, Agent],
    policy: WitnessTiming,
    reply_max_s: float,
) -> str | None:
    """What `serve` (and `serve --check`) asks before serving a study: the refusal line, or
    None."""
    kit = _timed(experiment, policy)
    if kit is None or experiment is None:
        return None
    print("measuring the AI witnesses' reply times (arena.witness_timing) …", file=sys.stderr)
    measures = asyncio.run(kit.measured(experiment, agents, reply_max_s))
    return preflight_problem(measures, policy, lambda line: print(line, file=sys.stderr))


async def opened_study_problem(
    experiment: Experiment | None,
    agents: Mapping[str, Agent],
    policy: WitnessTiming,
    reply_max_s: float,
) -> str | None:
    """The same for a study opened from /admin, in the server's loop (the lines to its log)."""
    kit = _timed(experiment, policy)
    if kit is None or experiment is None:
        return None
    measures = await kit.measured(experiment, agents, reply_max_s)
    return preflight_problem(measures, policy, log.warning)


def preflight_problem(
    measures: Sequence[WitnessMeasure], policy: WitnessTiming, say: Callable[[str], None]
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
    return f"{slow[0].line()}; or set arena.witness_timing: warn to serve it anyway"

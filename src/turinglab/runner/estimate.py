"""What a run will cost before it starts (`turinglab run --dry-run`): its trials, the calls and
tokens they may take, and the price of those tokens.

Two sources. From a finished pilot (a run of the same config name in the store): the mean calls
and tokens per trial and per agent that the pilot really used. Without one, an upper bound from
the design's turn caps and each agent's `max_tokens`: every seat speaks at most its cap of
turns, each reply is at most `max_tokens`, and each call's prompt holds the conversation so far
(so input grows with the square of the turns).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from turinglab.agents.pricing import Price, TokenUse, usd
from turinglab.games.spec import TrialSpec

# A guess where nothing better is known: a system prompt, and a reply without max_tokens.
PROMPT_TOKENS = 300
UNCAPPED_REPLY_TOKENS = 512


@dataclass
class AgentEstimate:
    calls: float = 0.0
    tokens_in: float = 0.0
    tokens_out: float = 0.0


@dataclass
class Estimate:
    trials: int
    basis: str  # "pilot run <id>" or "upper bound from the turn caps and max_tokens"
    agents: dict[str, AgentEstimate] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def calls(self) -> float:
        return sum(a.calls for a in self.agents.values())

    @property
    def tokens(self) -> float:
        return sum(a.tokens_in + a.tokens_out for a in self.agents.values())

    def cost(self, prices: Mapping[str, Price]) -> float | None:
        priced = [(prices[n], a) for n, a in self.agents.items() if n in prices]
        if not priced:
            return None
        return sum(p.of(round(a.tokens_in), round(a.tokens_out)) for p, a in priced)

    def lines(self, prices: Mapping[str, Price]) -> list[str]:
        out = [
            f"{self.trials:,} trials to play; estimate from {self.basis}:",
            f"  {self.calls:,.0f} calls, {self.tokens:,.0f} tokens, {usd(self.cost(prices))}",
        ]
        for name, a in sorted(self.agents.items()):
            price = prices.get(name)
            cost = usd(price.of(round(a.tokens_in), round(a.tokens_out))) if price else "no price"
            out.append(
                f"  {name}: {a.calls:,.0f} calls, {a.tokens_in:,.0f} in + "
                f"{a.tokens_out:,.0f} out tokens, {cost}"
            )
        return out + [f"  note: {n}" for n in self.notes]


def seat_turn_caps(experiment: Any) -> dict[str, int]:
    """Turns each seat may take at most, from the experiment's caps (GTT's field names; a
    game without them gets no bound)."""
    turns = getattr(experiment, "max_distinguisher_turns", None)
    if turns is None:
        return {}
    caps = {"distinguisher": int(turns), "unknown": int(turns)}
    specimen = getattr(experiment, "max_specimen_turns", None)
    if specimen is not None:
        caps["specimen"] = int(specimen)
    return caps


def from_caps(
    specs: Sequence[TrialSpec], experiment: Any, max_tokens: Mapping[str, int | None]
) -> Estimate:
    caps = seat_turn_caps(experiment)
    est = Estimate(len(specs), "an upper bound from the turn caps and max_tokens")
    if not caps:
        est.notes.append("this game has no turn caps to bound it: run a small pilot first")
        return est
    unset = sorted({n for n, m in max_tokens.items() if m is None})
    if unset:
        est.notes.append(
            f"no max_tokens for {', '.join(unset)}: {UNCAPPED_REPLY_TOKENS} tokens per reply "
            "assumed (set params.max_tokens to bound it)"
        )
    for spec in specs:
        for seat, agent in spec.seats.items():
            turns = caps.get(seat, caps["distinguisher"])
            reply = max_tokens.get(agent) or UNCAPPED_REPLY_TOKENS
            a = est.agents.setdefault(agent, AgentEstimate())
            a.calls += turns
            a.tokens_out += turns * reply
            # The k-th call's prompt: the instructions and k exchanges of at most 2 replies.
            a.tokens_in += sum(PROMPT_TOKENS + 2 * k * reply for k in range(turns))
    return est


def from_pilot(n_trials: int, pilot_id: str, finished: int, use: Sequence[TokenUse]) -> Estimate:
    """Scale the pilot's finished games' calls and tokens per trial to `n_trials`."""
    est = Estimate(n_trials, f"pilot run {pilot_id} ({finished} trials finished)")
    for u in use:
        if u.status != "finished" or finished == 0:
            continue
        a = est.agents.setdefault(u.agent, AgentEstimate())
        scale = n_trials / finished
        a.calls += u.calls * scale
        a.tokens_in += u.tokens_in * scale
        a.tokens_out += u.tokens_out * scale
    return est

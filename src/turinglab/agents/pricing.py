"""What a run costs: per-model prices (USD per million tokens, from the config or from the
endpoint's /models list at preflight), applied to tokens as they are counted."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

PER = 1_000_000


@dataclass(frozen=True)
class Price:
    in_usd_per_mtok: float
    out_usd_per_mtok: float

    def of(self, tokens_in: int, tokens_out: int) -> float:
        return (tokens_in * self.in_usd_per_mtok + tokens_out * self.out_usd_per_mtok) / PER


def configured_prices(configs: Mapping[str, Any]) -> dict[str, Price]:
    """Agent name -> price, for the agents whose config sets one (a missing half reads 0)."""
    prices = {}
    for name, cfg in configs.items():
        p_in = getattr(cfg, "price_in_usd_per_mtok", None)
        p_out = getattr(cfg, "price_out_usd_per_mtok", None)
        if p_in is not None or p_out is not None:
            prices[name] = Price(p_in or 0.0, p_out or 0.0)
    return prices


def listed_price(model_entry: Mapping[str, Any]) -> Price | None:
    """A price from an OpenRouter-style /models entry: `pricing.prompt` and
    `pricing.completion` in USD per token (strings)."""
    pricing = model_entry.get("pricing")
    if not isinstance(pricing, Mapping):
        return None
    try:
        p_in = float(pricing.get("prompt") or 0) * PER
        p_out = float(pricing.get("completion") or 0) * PER
    except (TypeError, ValueError):
        return None
    return Price(p_in, p_out)


@dataclass
class TokenUse:
    """Tokens of one agent in one kind of game (finished, failed, interrupted, ...)."""

    agent: str
    status: str
    calls: int
    tokens_in: int
    tokens_out: int


def total_cost(use: Iterable[TokenUse], prices: Mapping[str, Price]) -> float | None:
    """USD for `use`; None when no agent in it has a price."""
    cost, priced = 0.0, False
    for u in use:
        price = prices.get(u.agent)
        if price is not None:
            priced = True
            cost += price.of(u.tokens_in, u.tokens_out)
    return cost if priced else None


def usd(value: float | None) -> str:
    if value is None:
        return "cost unknown (no prices)"
    return f"${value:,.4f}" if value < 1 else f"${value:,.2f}"

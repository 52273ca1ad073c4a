"""Adaptive sampling wired into the runner: batches for unsettled cells only, then stop."""

from __future__ import annotations

from collections import Counter

from turinglab.agents.base import AgentReply, CallContext, ChatMessage, Route
from turinglab.config import parse_config
from turinglab.runner.execute import run_experiment
from turinglab.runner.plan import plan_trials
from turinglab.store.database import Store


class Signature:
    """Always says its signature; as a judge, answers 1 iff X said the judge's own signature.

    So it always catches a different model (cross cells: p = 1, clearly d > ε) but cannot tell
    itself from itself imitating itself (self cells: p = ½, never settled at small n)."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def endpoint(self) -> None:
        return None

    async def reply(self, history: list[ChatMessage], ctx: CallContext) -> AgentReply:
        heard = [m.content for m in history if m.role == "user"]
        said = sum(m.role == "assistant" for m in history)
        if said == 1 and len(heard) >= 2:  # judging: X has answered its opening question
            same = heard[-1] == f"I am {self.name}"
            return AgentReply(f"<answer>{int(same)}</answer>", Route("test", self.name))
        return AgentReply(f"I am {self.name}", Route("test", self.name))

    async def aclose(self) -> None:
        pass


def config(max_n: int) -> object:
    return parse_config(
        {
            "name": "adaptive",
            "agents": {"a": {"kind": "scripted"}, "b": {"kind": "scripted"}},
            "experiment": {
                "game": "gtt",
                "universe": ["a", "b"],
                "adaptive": {"eps": 0.05, "alpha": 0.1, "batch": 4, "min_n": 4, "max_n": max_n},
            },
        }
    )


AGENTS = {"a": Signature("a"), "b": Signature("b")}


async def test_adaptive_sampling_stops_settled_cells_early(tmp_path) -> None:
    store = Store(str(tmp_path / "a.db"))
    said: list[str] = []
    cfg = config(max_n=40)
    assert len(plan_trials(cfg)) == 4 * 4  # min_n per cell to start with
    summary = await run_experiment(cfg, store, say=said.append, agents=AGENTS)
    assert summary.status == "finished"
    rows = store.results(summary.run_id)
    per_cell = Counter((r.params["actor"], r.params["distinguisher"]) for r in rows)
    assert all(r.correct for r in rows if r.params["actor"] != r.params["distinguisher"])
    # Cross cells (p = 1) settle early; self cells (p = ½ = the line ± δ) run to max_n.
    assert 4 < per_cell[("a", "b")] < 40 and 4 < per_cell[("b", "a")] < 40
    assert per_cell[("a", "a")] == per_cell[("b", "b")] == 40
    assert sum(per_cell.values()) < 4 * 40
    assert any("Adaptive sampling (gtt)" in m and "saved" in m for m in said)
    [info] = store.list_runs()
    assert info.n_planned == len(rows)  # every planned trial finished, none left over
    # Re-running finds nothing to do and plans nothing more.
    again = await run_experiment(cfg, store, say=said.append, agents=AGENTS)
    assert again.counters.finished == 0
    assert len(store.results(summary.run_id)) == len(rows)
    store.close()


async def test_max_n_bounds_every_cell(tmp_path) -> None:
    store = Store(str(tmp_path / "b.db"))
    summary = await run_experiment(config(max_n=6), store, say=lambda m: None, agents=AGENTS)
    per_cell = Counter(
        (r.params["actor"], r.params["distinguisher"]) for r in store.results(summary.run_id)
    )
    assert max(per_cell.values()) <= 6
    store.close()

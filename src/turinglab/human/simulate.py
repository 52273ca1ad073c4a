"""Simulated human-judged studies with known true parameters (for tests, demos, GLMM checks).

Generative model of one game of AI witness w in round r by interrogator i:
  logit P(w judged human) = logit(p_w) + u_i + round_effect·(r − 1) + Σ_v β_v·(x_{v,i} − c_v)
  u_i ~ N(0, interrogator_sd²) — a "gullibility" shift on the logit scale;
  x_{v,i}: interrogator i's numeric exit-survey answer v, c_v its scale centre (below),
  β_v = survey_effects[v].
So `witness_win_rates` are conditional rates of an average interrogator in round 1; the
population (marginal) rate over interrogators is `marginal_win_rate(p, sd)`.
Three-party: the human witness of the game is judged human iff the AI is not.
Two-party: a game has a human witness with probability `human_share`; a human witness is judged
human with the same model, p = `human_win_rate`.
Interrogators meet witnesses in random order, cycling through shuffled lists of all witnesses.
Confidence depends on correctness: N(mean_correct, sd) or N(mean_wrong, sd), rounded and
clipped to 0–100; the two rows of a three-party game share it (it belongs to the verdict).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
from scipy.special import expit, logit

# numeric survey variables: (generator range low, high inclusive, centre used by the effects)
SURVEY_SCALES: dict[str, tuple[int, int, float]] = {
    "survey_birth_year": (1950, 2006, 1985.0),
    "survey_chatbot_use": (1, 5, 3.0),
    "survey_llm_knowledge": (1, 5, 3.0),
    "survey_ai_intelligence": (1, 5, 3.0),
    "survey_ai_feeling": (1, 5, 3.0),
}
_GENDERS = ("female", "male", "non-binary")
_EDUCATION = ("high school", "some college", "bachelor", "postgraduate")


def marginal_win_rate(p: float, interrogator_sd: float, nodes: int = 60) -> float:
    """E[expit(logit p + sd·Z)], Z ~ N(0,1), by Gauss–Hermite quadrature."""
    x, w = np.polynomial.hermite_e.hermegauss(nodes)
    return float(np.sum(w * expit(logit(p) + interrogator_sd * x)) / np.sqrt(2 * np.pi))


def _persona(label: str) -> str | None:
    upper = label.upper()
    if upper.endswith("NO-PERSONA"):
        return "NO-PERSONA"
    return "PERSONA" if upper.endswith("PERSONA") else None


def _model(label: str) -> str:
    for suffix in ("-NO-PERSONA", "-PERSONA"):
        if label.upper().endswith(suffix):
            return label[: -len(suffix)]
    return label


def simulate_study(
    witness_win_rates: Mapping[str, float],
    n_interrogators: int,
    games_per_interrogator: int,
    interrogator_sd: float = 0.0,
    seed: int = 0,
    format: str = "three-party",
    *,
    study: str = "default",
    personas: Mapping[str, str | None] | None = None,
    models: Mapping[str, str] | None = None,
    human_win_rate: float = 0.7,
    human_share: float = 0.5,
    round_effect: float = 0.0,
    survey: bool = True,
    survey_effects: Mapping[str, float] | None = None,
    confidence_means: tuple[float, float] = (70.0, 50.0),
    confidence_sd: float = 20.0,
    prior_rate: float = 0.0,
    short_game_rate: float = 0.0,
) -> pd.DataFrame:
    """A study table (rows.txt §2) drawn from the model above; see the module docstring.

    personas/models default to what the label says ("GPT-4.5-PERSONA" → persona "PERSONA",
    model "GPT-4.5"). `prior_rate` flags interrogators as prior participants; `short_game_rate`
    gives games an interrogator message count below 2 (for exclusion tests)."""
    if format not in ("three-party", "two-party"):
        raise ValueError(f"format must be three-party or two-party, not {format!r}")
    if not witness_win_rates:
        raise ValueError("witness_win_rates is empty")
    for label, p in witness_win_rates.items():
        if not 0 < p < 1:
            raise ValueError(f"win rate of {label!r} must be strictly between 0 and 1, not {p}")
    effects = dict(survey_effects or {})
    unknown = set(effects) - set(SURVEY_SCALES)
    if unknown or (effects and not survey):
        raise ValueError(f"survey_effects must name numeric survey variables: {sorted(unknown)}")
    rng = np.random.default_rng(seed)
    labels = list(witness_win_rates)
    rows: list[dict[str, object]] = []
    game_index = 0
    for i in range(n_interrogators):
        interrogator = f"{study}-i{i:04d}"
        answers = _survey_answers(rng) if survey else {}
        shift = float(rng.normal(0.0, interrogator_sd)) if interrogator_sd > 0 else 0.0
        for variable, beta in effects.items():
            shift += beta * (float(answers[variable]) - SURVEY_SCALES[variable][2])
        prior = bool(rng.random() < prior_rate)
        order = _witness_order(rng, labels, games_per_interrogator)
        correct_count = 0
        first_row = len(rows)
        for r, label in enumerate(order, start=1):
            game = f"{study}-g{game_index:05d}"
            game_index += 1
            human_game = format == "two-party" and rng.random() < human_share
            base = human_win_rate if human_game else witness_win_rates[label]
            judged_human = bool(rng.random() < expit(logit(base) + shift + round_effect * (r - 1)))
            correct = judged_human if human_game else not judged_human
            correct_count += correct
            mean = confidence_means[0] if correct else confidence_means[1]
            common = {
                "game": game,
                "study": study,
                "format": format,
                "interrogator": interrogator,
                "round": r,
                "confidence": float(np.clip(np.round(rng.normal(mean, confidence_sd)), 0, 100)),
                "duration_s": float(np.round(rng.uniform(90, 300), 1)),
                "prior_participation": prior,
                **answers,
            }
            short = rng.random() < short_game_rate
            witnesses = [("human", "human", not judged_human)] if format == "three-party" else []
            if human_game:
                witnesses = [("human", "human", judged_human)]
            else:
                witnesses.insert(0, (label, "ai", judged_human))
            for k, (name, kind, verdict) in enumerate(witnesses):
                messages = int(rng.integers(0, 2)) if short and k == 0 else 2 + rng.poisson(3)
                rows.append(
                    {
                        **common,
                        "witness": name,
                        "witness_type": kind,
                        "judged_human": verdict,
                        "interrogator_messages": messages,
                        "witness_messages": messages,
                        "persona": _lookup(personas, name, _persona) if kind == "ai" else None,
                        "model": _lookup(models, name, _model) if kind == "ai" else None,
                    }
                )
        if survey:
            for row in rows[first_row:]:
                row["survey_estimated_correct"] = correct_count
    return pd.DataFrame(rows)


def _lookup(mapping: Mapping[str, str | None] | None, label: str, default: object) -> object:
    if mapping is not None and label in mapping:
        return mapping[label]
    return default(label)  # type: ignore[operator]


def _witness_order(rng: np.random.Generator, labels: Sequence[str], games: int) -> list[str]:
    order: list[str] = []
    while len(order) < games:
        order.extend(str(x) for x in rng.permutation(labels))
    return order[:games]


def _survey_answers(rng: np.random.Generator) -> dict[str, int | str]:
    answers: dict[str, int | str] = {
        name: int(rng.integers(low, high + 1)) for name, (low, high, _) in SURVEY_SCALES.items()
    }
    answers["survey_gender"] = str(rng.choice(_GENDERS))
    answers["survey_education"] = str(rng.choice(_EDUCATION))
    return answers


def simulate_stt(
    p_system: float,
    p_tie: float = 0.0,
    humans: Sequence[str] = ("h1", "h2"),
    n_sessions: int = 10,
    turns_per_session: int = 10,
    mode: str = "panel",
    seed: int = 0,
    system: str = "system",
) -> pd.DataFrame:
    """A Strong-Turing-Test preference table. Each turn the system's reply is preferred with
    probability p_system, a tie with p_tie, otherwise one of the humans' replies (uniformly).
    The system's true score is p_system + p_tie/2. mode "panel": every human replies every
    turn; "head-to-head": one human, drawn at random, per turn."""
    if mode not in ("panel", "head-to-head"):
        raise ValueError(f"mode must be panel or head-to-head, not {mode!r}")
    if p_system < 0 or p_tie < 0 or p_system + p_tie > 1:
        raise ValueError("need p_system, p_tie ≥ 0 and p_system + p_tie ≤ 1")
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_sessions):
        for t in range(1, turns_per_session + 1):
            present = list(humans) if mode == "panel" else [str(rng.choice(list(humans)))]
            u = rng.random()
            if u < p_system:
                choice = system
            elif u < p_system + p_tie:
                choice = "tie"
            else:
                choice = str(rng.choice(present))
            rows.append(
                {
                    "session": f"s{s:03d}",
                    "turn": t,
                    "investigator": f"inv{s % 3}",
                    "system": system,
                    "choice": choice,
                    "sides": ";".join([system, *present]),
                }
            )
    return pd.DataFrame(rows)

"""One agent answers one stimulus (Zhang et al., captioning, word association, colour estimation,
object detection): the machine side of an ITT dataset, played by the runner (concurrency,
retries, resume, several workers).

Each responder answers each stimulus `responses_per_stimulus` times. A word-association cue
gets the paper's prompt-based procedure (three worked examples, then the cue); an image gets its
task's question (a caption, the dominant colour, three things seen) with the image attached, so
only agents that see images (OpenAI-compatible vision models) answer image tasks. The reply
goes through the task's controls (itt/tasks.py): an association is post-processed, a caption
checked for the rules that apply to machines, a colour or three objects checked for form.
A reply the controls refuse is sampled again (a fresh seed), up to `max_resamples` times,
each refusal recorded; a trial whose every reply was refused ends `flagged`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from turinglab.agents.base import Agent, ChatMessage
from turinglab.games.kinds import PLANNED_COUNT, GameContext, GameKind, register
from turinglab.games.spec import FINISHED, FLAGGED, GameResult, TrialSpec, trial_seed
from turinglab.games.table import GAME, Seat, Table
from turinglab.itt.stimuli import StimulusSet, load_stimuli, text_stimuli
from turinglab.itt.tasks import (
    CAPTION_AGENT_SUFFIX,
    CAPTION_PROMPT,
    VISION_TASKS,
    WORD_EXAMPLES,
    WORD_PROMPT,
    association_history,
    check_agent,
    image_prompt,
)

RESPONDER = "responder"
GAME_NAME = "itt-response"
# Short answers: stop at the end of the line (an association, a one-sentence caption).
STOPS = ("\n",)


class ITTResponseExperiment(BaseModel):
    """`game: itt-response` in an experiment config."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    game: Literal["itt-response"]
    task: Literal["word-association", "captioning", "color-estimation", "object-detection"]
    responders: list[str] = Field(min_length=1, description="agents that answer every stimulus")
    stimuli: Path | None = Field(
        default=None, description="stimuli file (CSV/JSONL) or folder with stimuli.csv"
    )
    cues: list[str] = Field(default_factory=list, description="word-association cues inline")
    responses_per_stimulus: int = Field(default=1, ge=1)
    max_resamples: int = Field(default=2, ge=0)
    seed: int = 0

    @model_validator(mode="after")
    def _one_source(self) -> ITTResponseExperiment:
        if (self.stimuli is None) == (not self.cues):
            raise ValueError("give either stimuli (a file) or cues (a list), not both or neither")
        if self.cues and self.task != "word-association":
            raise ValueError("cues are word-association stimuli; image tasks need a stimuli file")
        if len(set(self.responders)) != len(self.responders):
            raise ValueError("responders lists an agent more than once")
        return self

    def agent_names(self) -> list[str]:
        return list(self.responders)

    def with_base_dir(self, base_dir: Path) -> ITTResponseExperiment:
        """The stimuli path made relative to the config file, and checked before anything runs
        (config.py calls this for every experiment that has it)."""
        if self.stimuli is None:
            return self
        full = self.stimuli if self.stimuli.is_absolute() else base_dir / self.stimuli
        self.load(full)
        return self.model_copy(update={"stimuli": full.resolve()})

    def load(self, path: Path | None = None) -> StimulusSet:
        if path is None and self.stimuli is None:
            return text_stimuli(self.task, self.cues)
        found = load_stimuli(path or self.stimuli)  # type: ignore[arg-type]
        other = sorted({s.task for s in found.stimuli} - {self.task})
        if other:
            raise ValueError(f"stimuli: the file holds {other} stimuli, but task is {self.task}")
        return found


class ITTResponseGame:
    name = GAME_NAME

    def __init__(self, config: ITTResponseExperiment, context: GameContext) -> None:
        self.config = config
        self.context = context
        self._stimuli: StimulusSet | None = None

    @property
    def stimuli(self) -> StimulusSet:
        if self._stimuli is None:
            self._stimuli = self.config.load()
        return self._stimuli

    def planned_count(self) -> int:
        c = self.config
        return len(c.responders) * len(self.stimuli.stimuli) * c.responses_per_stimulus

    size_field = "experiment.responses_per_stimulus"

    def plan(self) -> list[TrialSpec]:
        specs: list[TrialSpec] = []
        for agent in self.config.responders:
            for s in self.stimuli.stimuli:
                for rep in range(self.config.responses_per_stimulus):
                    key = f"{agent}>{s.stimulus_id}#{rep}"
                    image = self.stimuli.image_path(s)
                    params: dict[str, Any] = {
                        "task": s.task,
                        "stimulus_id": s.stimulus_id,
                        "stimulus": s.stimulus,
                        "stimulus_file": None if s.stimulus_file is None else str(s.stimulus_file),
                        "image_path": None if image is None else str(image),
                        "target": s.target,
                        "repetition": rep,
                    }
                    specs.append(
                        TrialSpec(
                            index=len(specs),
                            key=key,
                            game=self.name,
                            seed=trial_seed(self.config.seed, key),
                            seats={RESPONDER: agent},
                            params=params,
                        )
                    )
        return specs

    def seats(self, spec: TrialSpec, agents: Mapping[str, Agent]) -> dict[str, Seat]:
        name = spec.seats[RESPONDER]
        agent = agents[name]
        return {
            RESPONDER: Seat(RESPONDER, name, agent, self.context.agent_kinds.get(name, "agent"))
        }

    def identity(self) -> dict[str, Any]:
        """Prompt texts and what the stimuli say (their file and images hashed), so a changed
        stimulus makes a new run rather than mixing answers to two versions."""
        vision = self.config.task in VISION_TASKS
        digest = hashlib.sha256()
        for s in self.stimuli.stimuli:
            digest.update(s.model_dump_json().encode())
            image = self.stimuli.image_path(s)
            if image is not None:
                digest.update(hashlib.sha256(image.read_bytes()).digest())
        return {
            "caption_prompt": CAPTION_PROMPT + CAPTION_AGENT_SUFFIX,
            # only image tasks other than captioning: their runs' identities change, no other
            **({"image_prompt": image_prompt(self.config.task)} if vision else {}),
            "word_prompt": WORD_PROMPT,
            "word_examples": [list(e) for e in WORD_EXAMPLES],
            "stimuli_sha256": digest.hexdigest(),
        }

    def history(self, table: Table, spec: TrialSpec) -> list[ChatMessage]:
        """The responder's view: worked examples and the cue, or the instructions and image
        (posted to the table, so the stored transcript shows what was asked)."""
        task = spec.params["task"]
        if task == "word-association":
            history = association_history(str(spec.params["stimulus"]))
            table.tell(RESPONDER, history[-1].content, phase="stimulus")
            return history
        image = self.stimuli.image(_stimulus_of(self.stimuli, spec))
        images = () if image is None else (image,)
        text = image_prompt(task)
        table.post(GAME, text, visible_to=(RESPONDER,), phase="stimulus", images=images)
        return table.view(RESPONDER)

    async def play(self, table: Table, spec: TrialSpec) -> GameResult:
        task = str(spec.params["task"])
        seat = table.seats[RESPONDER]
        if spec.params.get("image_path") and not getattr(seat.agent, "sees_images", False):
            # A failed attempt, stored with this message (the runner names it at the end).
            raise ValueError(
                f"{task}: agent {seat.agent_name!r} cannot see images; use an agent that "
                "does (kind: openai with a vision model)"
            )
        history = self.history(table, spec)
        refused: list[dict[str, Any]] = []
        for attempt in range(self.config.max_resamples + 1):
            reply = await table.ask(RESPONDER, history, stop=STOPS)
            checked = check_agent(task, spec.params.get("stimulus"), reply.text)
            if checked.ok:
                table.post(RESPONDER, reply.text, visible_to=(RESPONDER,), reply=reply)
                details = _details(spec, reply.text, checked.text, refused)
                return GameResult(FINISHED, details=details)
            refused.append(
                {
                    "attempt": attempt,
                    "text": reply.text,
                    "rules": [v.rule for v in checked.violations],
                    "why": "; ".join(v.message for v in checked.violations),
                }
            )
        details = _details(spec, refused[-1]["text"], None, refused)
        return GameResult(FLAGGED, details=details, flags=["every-reply-refused"])


def _stimulus_of(stimuli: StimulusSet, spec: TrialSpec) -> Any:
    wanted = spec.params["stimulus_id"]
    return next(s for s in stimuli.stimuli if s.stimulus_id == wanted)


def _details(
    spec: TrialSpec, raw: str, response: str | None, refused: list[dict[str, Any]]
) -> dict[str, Any]:
    keep = ("task", "stimulus_id", "stimulus", "stimulus_file", "target", "repetition")
    return {
        **{k: spec.params.get(k) for k in keep},
        "raw": raw,
        "response": response,
        "refused": refused,
    }


def _itt_response_game(config: Any, context: GameContext) -> ITTResponseGame:
    if not isinstance(config, ITTResponseExperiment):
        config = ITTResponseExperiment.model_validate(config)
    return ITTResponseGame(config, context)


KIND = register(
    GameKind(
        GAME_NAME,
        ITTResponseExperiment,
        _itt_response_game,
        capabilities=frozenset({PLANNED_COUNT}),
    )
)

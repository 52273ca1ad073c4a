"""Durable state of human judging: an append-only log in the study folder, replayed on start.

judging/log.jsonl   one JSON line per event, flushed and fsynced before the judge sees the next
                    trial: `judge` (registration: demographics, batch seed and size, a hash of
                    the session token so a judge can resume after a restart) and `answer`
                    (position, H/M label, control answer, `ms`: the page's response time). A
                    line is written whole or not at all; a torn last line (power cut
                    mid-write) is cut away on start.
judgements-human.csv  the judgements file (itt/judgements.py) of every judge who finished a
                    batch, with the exclusions of itt/batches.screen applied; rewritten
                    atomically whenever a judge finishes, so `turinglab itt score` reads it as is;
                    `rt` is the response time in seconds (`itt score --min-rt 3`).
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from turinglab.arena.itt.judging_study import JudgingStudy
from turinglab.itt.batches import Answer, Batch, Screened, build_batch, screen
from turinglab.itt.judgements import save_judgements
from turinglab.itt.study import HUMAN_JUDGEMENTS

LOG = Path("judging") / "log.jsonl"
SEED_STRIDE = 100_003  # batch seed = study seed * stride + judge ordinal: distinct, recorded


class Demographics(BaseModel):
    """The short form before judging; every value becomes a judgements-file column."""

    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True)

    age: int = Field(ge=18, le=120)
    gender: Literal["female", "male", "non-binary", "other", "prefer not to say"]
    education: Literal["school", "bachelor", "master", "doctorate", "other"]
    english: Literal["native", "fluent", "basic"]

    def columns(self) -> dict[str, str]:
        return {k: str(v) for k, v in self.model_dump().items()}


class Rejected(ValueError):
    """An answer or registration that is refused; the message says why, in one line."""


@dataclass
class Judge:
    id: str
    token_sha: str
    seed: int
    demographics: Demographics
    batch: Batch
    answers: list[Answer] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return len(self.answers) >= len(self.batch.trials)


def _seconds(ms: int | None) -> float | None:
    """The page's response time (ms, from the trial being drawn to the answer) in seconds."""
    return None if ms is None else round(ms / 1000, 3)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class JudgingStore:
    def __init__(
        self,
        study: JudgingStudy,
        *,
        batch_size: int = 20,
        seed: int = 0,
        min_control_accuracy: float = 0.75,
    ) -> None:
        self.study = study
        self.batch_size = batch_size
        self.seed = seed
        self.min_control_accuracy = min_control_accuracy
        self.candidates = study.candidates()
        self.judges: dict[str, Judge] = {}
        self._by_token: dict[str, Judge] = {}
        self._lock = threading.Lock()
        self.log_path = study.folder / LOG
        self.output = study.folder / HUMAN_JUDGEMENTS
        # Refuse a study that cannot fill one batch now, not when the first judge arrives.
        build_batch(self.candidates, batch_size, judge="check", seed=seed)
        self._replay()
        self._export()

    # -- durable log ---------------------------------------------------------------------
    def _append(self, event: dict[str, Any]) -> None:
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        line = json.dumps(event, ensure_ascii=False) + "\n"
        with self.log_path.open("a", encoding="utf-8") as fh:
            fh.write(line)
            fh.flush()
            os.fsync(fh.fileno())

    def _replay(self) -> None:
        if not self.log_path.is_file():
            return
        data = self.log_path.read_bytes()
        if data and not data.endswith(b"\n"):
            # A torn last line (cut off mid-write, so never acknowledged): cut it away, or the
            # next append would be glued onto it and lost.
            data = data[: data.rfind(b"\n") + 1]
            with self.log_path.open("r+b") as fh:
                fh.truncate(len(data))
        for text in data.decode("utf-8").splitlines():
            event = json.loads(text)
            if event["kind"] == "judge":
                self._replay_judge(event)
            elif event["kind"] == "answer":
                judge = self.judges[event["judge"]]
                trial = judge.batch.trials[event["position"]]
                seconds = _seconds(event.get("ms"))
                judge.answers.append(Answer(trial, event["label"], event.get("control"), seconds))

    def _replay_judge(self, event: dict[str, Any]) -> None:
        # Batches are redrawn from their seeds: a changed dataset would silently pair old
        # answers with other responses, so refuse it.
        changed = ValueError(
            f"{self.log_path}: the responses changed since judge {event['judge']} was given a "
            "batch; judge a changed dataset in a new study folder"
        )
        try:
            judge = self._add_judge(
                event["judge"],
                event["token_sha"],
                event["seed"],
                event["size"],
                Demographics.model_validate(event["demographics"]),
            )
        except ValueError:
            raise changed from None
        if [t.item for t in judge.batch.trials] != event["items"]:
            raise changed

    def _add_judge(
        self, judge_id: str, token_sha: str, seed: int, size: int, demo: Demographics
    ) -> Judge:
        batch = build_batch(self.candidates, size, judge=judge_id, seed=seed)
        judge = Judge(judge_id, token_sha, seed, demo, batch)
        self.judges[judge_id] = judge
        self._by_token[token_sha] = judge
        return judge

    # -- what the web layer calls ----------------------------------------------------------
    def judge_for(self, token: str | None) -> Judge | None:
        return self._by_token.get(token_hash(token)) if token else None

    def register(self, token: str, demographics: Demographics) -> Judge:
        with self._lock:
            sha = token_hash(token)
            if sha in self._by_token:
                return self._by_token[sha]
            ordinal = len(self.judges) + 1
            judge_id = f"j-{ordinal:04d}-{sha[:6]}"
            seed = self.seed * SEED_STRIDE + ordinal
            judge = self._add_judge(judge_id, sha, seed, self.batch_size, demographics)
            self._append(
                {
                    "kind": "judge",
                    "judge": judge_id,
                    "token_sha": sha,
                    "seed": seed,
                    "size": self.batch_size,
                    "items": [t.item for t in judge.batch.trials],
                    "demographics": demographics.model_dump(),
                    "at": datetime.now(UTC).isoformat(),
                }
            )
            return judge

    def answer(
        self, judge: Judge, position: int, label: str, control: str | None, ms: int | None
    ) -> None:
        with self._lock:
            if judge.done:
                raise Rejected("this batch is finished")
            if position != len(judge.answers):
                raise Rejected(f"trial {position} is not the current one")
            if label not in ("H", "M"):
                raise Rejected("label must be H or M")
            trial = judge.batch.trials[position]
            if trial.control is not None:
                if control not in trial.control.options:
                    raise Rejected("answer the control question with one of its options")
            elif control is not None:
                raise Rejected("this trial has no control question")
            self._append(
                {
                    "kind": "answer",
                    "judge": judge.id,
                    "position": position,
                    "label": label,
                    "control": control,
                    "ms": ms,
                    "at": datetime.now(UTC).isoformat(),
                }
            )
            judge.answers.append(Answer(trial, label, control, _seconds(ms)))
            if judge.done:
                self._export()

    # -- scoring ---------------------------------------------------------------------------
    def screened(self) -> Screened:
        """Exclusions applied to the judges who finished (a half batch says too little)."""
        finished = {j.id: j for j in self.judges.values() if j.done}
        return screen(
            {jid: j.answers for jid, j in finished.items()},
            min_control_accuracy=self.min_control_accuracy,
            demographics={jid: j.demographics.columns() for jid, j in finished.items()},
        )

    def _export(self) -> None:
        rows = self.screened().judgements
        if not rows:
            return
        tmp = self.output.with_name(self.output.stem + ".tmp" + self.output.suffix)
        save_judgements(tmp, rows)
        os.replace(tmp, self.output)

    def summary(self) -> list[dict[str, Any]]:
        """Per judge: answered, control accuracy so far, excluded (finished judges only)."""
        excluded = self.screened().excluded_judges
        out = []
        for j in self.judges.values():
            controls = [a for a in j.answers if a.trial.control is not None]
            right = sum(a.control_answer == a.trial.control.answer for a in controls)  # type: ignore[union-attr]
            out.append(
                {
                    "judge": j.id,
                    "answered": len(j.answers),
                    "total": len(j.batch.trials),
                    "controls": f"{right}/{len(controls)}" if controls else "-",
                    "status": "excluded"
                    if j.id in excluded
                    else ("finished" if j.done else "judging"),
                    **j.demographics.columns(),
                }
            )
        return out

"""Collecting human responses at /respond on the arena's app (FastAPI's TestClient, real files):
consent, one stimulus at a time, every rule checked on the server with time measured there,
refusals that store nothing, atomic participant records, the admin export, a restart that
resumes a participant, and `serve --itt-collect` refusing a bad stimuli file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from arena_fixtures import ADMIN_PASSWORD, make_setup
from judge_fixtures import stimuli_folder
from turinglab.arena import create_app
from turinglab.arena.itt.collect_store import HUMAN_RESPONSES, PARTICIPANTS, CollectStore
from turinglab.itt.dataset import load_dataset

CAPTION = "Soft green grass covers the wide empty field"


class Clock:
    """Server time, moved by the test."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def client_for(store: CollectStore) -> TestClient:
    client = TestClient(create_app(make_setup(), admin_password=ADMIN_PASSWORD, collecting=store))
    page = client.get("/respond")
    assert page.status_code == 200 and "Describe and associate" in page.text
    return client


def answer(client: TestClient, position: int, text: str) -> Any:
    return client.post("/respond/api/answer", json={"position": position, "text": text})


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_participant_answers_with_every_rule_checked(tmp_path: Path) -> None:
    folder = stimuli_folder(tmp_path / "study", cues=("ocean",))
    clock = Clock()
    store = CollectStore.open(folder, clock=clock, seed=3)
    client = client_for(store)
    assert client.get("/respond/api/state").json() == {"registered": False}
    refused = client.post("/respond/api/start", json={"consent": False})
    assert refused.status_code == 400 and "consent" in refused.json()["error"]
    state = client.post("/respond/api/start", json={"consent": True}).json()
    assert (state["answered"], state["total"]) == (0, 2)
    typed: dict[str, str] = {}
    while "trial" in state:
        trial = state["trial"]
        before = files(folder)
        if trial["task"] == "captioning":
            assert trial["image"].startswith("/respond/media/") and len(trial["rules"]) == 4
            image = client.get(trial["image"])
            assert image.headers["content-type"] == "image/png"
            assert image.content == (folder / "images" / "green.png").read_bytes()
            clock.now += 2.0  # too quick, and the caption breaks other rules too
            bad = answer(client, trial["position"], "A photo of grass!#")
            assert bad.status_code == 422
            rules = [v["rule"] for v in bad.json()["violations"]]
            assert rules == ["min-words", "special-characters", "too-fast", "mentions-medium"]
            assert "more than 4 s" in bad.json()["error"]
            clock.now += 3.0  # 5 s since the picture was served
            text = CAPTION
        else:
            assert trial["cue"] == "ocean" and "'ocean'" in trial["prompt"]
            bad = answer(client, trial["position"], "blue waves")
            assert bad.json()["violations"] == [
                {"rule": "one-word", "message": "type exactly one word, letters only"}
            ]
            stop = answer(client, trial["position"], "the")
            assert stop.json()["violations"][0]["message"] == "choose another word: stop word"
            text = "Waves"
        assert files(folder) == before, "a refused answer changed files"
        state = answer(client, trial["position"], text).json()
        typed[trial["task"]] = text
    assert state == {"registered": True, "answered": 2, "total": 2}

    rows = {r.task: r for r in load_dataset(folder / HUMAN_RESPONSES)}
    (record_file,) = (folder / PARTICIPANTS).glob("*.json")
    record = json.loads(record_file.read_text())
    pid = record["participant"]
    assert rows["captioning"].text == CAPTION and rows["word-association"].text == "wave"
    assert {r.model_extra["raw"] for r in rows.values()} == set(typed.values())  # type: ignore[index]
    assert {r.agent for r in rows.values()} == {pid} and {r.source for r in rows.values()} == {
        "human"
    }
    assert str(rows["captioning"].stimulus_file) == "images/green.png"
    assert [a["seconds"] for a in record["answers"] if a["stimulus_id"] == "img-green"] == [5.0]

    assert client.get("/admin/export/responses.csv").status_code == 401
    export = client.get("/admin/export/responses.csv", auth=("admin", ADMIN_PASSWORD))
    assert export.status_code == 200
    assert export.content == (folder / HUMAN_RESPONSES).read_bytes()
    assert answer(client, 2, "late").status_code == 422  # the batch is finished


def test_restart_resumes_a_participant_and_keeps_their_answers(tmp_path: Path) -> None:
    folder = stimuli_folder(tmp_path / "study", cues=("ocean", "bread", "river"))
    clock = Clock()
    client = client_for(CollectStore.open(folder, clock=clock))
    state = client.post("/respond/api/start", json={"consent": True}).json()
    words = [t for t in [state["trial"]] if t["task"] == "word-association"]
    if not words:  # the picture first: caption it
        clock.now += 10
        state = answer(client, 0, CAPTION).json()
    position = state["trial"]["position"]
    if state["trial"]["task"] == "word-association":
        state = answer(client, position, "Mountains").json()
    cookie = client.cookies
    answered = state["answered"]

    again = TestClient(
        create_app(
            make_setup(),
            admin_password=ADMIN_PASSWORD,
            collecting=CollectStore.open(folder, clock=clock),
        ),
        cookies=cookie,
    )
    resumed = again.get("/respond/api/state").json()
    assert resumed["answered"] == answered and resumed["total"] == 4
    assert resumed["trial"]["position"] == answered
    # A second participant gets their own id and their own order.
    other = client_for(CollectStore.open(folder, clock=clock))
    other.post("/respond/api/start", json={"consent": True})
    assert len(list((folder / PARTICIPANTS).glob("*.json"))) == 2


def test_answers_need_consent_and_the_current_position(tmp_path: Path) -> None:
    folder = stimuli_folder(tmp_path / "study")
    client = client_for(CollectStore.open(folder))
    assert "consent" in answer(client, 0, "x").json()["error"]
    client.post("/respond/api/start", json={"consent": True})
    wrong = answer(client, 1, "tree")
    assert wrong.status_code == 422 and "not the current one" in wrong.json()["error"]
    long = answer(client, 0, "x" * 1001)
    assert long.status_code == 400 and "text" in long.json()["error"]
    assert client.get("/respond/media/7").status_code == 404
    (record,) = (folder / PARTICIPANTS).glob("*")  # the registration, no answer in it
    assert json.loads(record.read_text())["answers"] == []


def test_serve_refuses_a_bad_stimuli_file(tmp_path: Path) -> None:
    from turinglab.arena.web.serve import serve

    folder = stimuli_folder(tmp_path / "study")
    (folder / "stimuli.csv").write_text("stimulus_id,task\nx,captioning\n")
    with pytest.raises(SystemExit, match=r"--itt-collect .*stimuli.csv:2: .*needs stimulus_file"):
        serve(itt_collect=folder, store=str(tmp_path / "s.db"))

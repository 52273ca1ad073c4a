"""ITT human judging over HTTP (FastAPI's TestClient against the real app and real files):
registration, answers stored as given, exclusions, `itt score` on the result, restart,
refusals, admin pages, images served safely, and the mount in the arena app."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from judge_fixtures import ADMIN_PASSWORD, XSS, conversation_study, image_study
from turinglab.arena.itt.judging import create_judging_app, open_judging
from turinglab.arena.itt.judging_store import HUMAN_JUDGEMENTS, LOG
from turinglab.cli.itt import itt_app

FORM = {"age": 34, "gender": "female", "education": "master", "english": "fluent"}
cli = typer.Typer()
cli.add_typer(itt_app, name="itt")


def judge_client(app: Any) -> TestClient:
    client = TestClient(app)
    assert client.get("/judge").status_code == 200  # sets the cookie
    return client


def start(client: TestClient, **form: Any) -> dict[str, Any]:
    res = client.post("/judge/api/start", json={"consent": True, "demographics": FORM | form})
    assert res.status_code == 200, res.text
    return dict(res.json())


def answer_all(client: TestClient, state: dict[str, Any], wrong_controls: bool = False) -> list:
    given = []
    while "trial" in state:
        trial = state["trial"]
        label = "H" if trial["position"] % 3 else "M"
        control = None
        if trial["control"]:
            options = trial["control"]["options"]
            control = options[0]
            if trial["kind"] == "conversation":
                # The topic is in every message of the fixture's conversations.
                topic = next(
                    o
                    for o in options
                    if o in trial["messages"][0]["text"]
                    or (XSS in trial["messages"][0]["text"] and o == "science")
                )
                control = next(o for o in options if o != topic) if wrong_controls else topic
        res = client.post(
            "/judge/api/answer", json={"position": trial["position"], "label": label,
                                       "control": control, "ms": 1200})  # fmt: skip
        assert res.status_code == 200, res.text
        given.append((trial["position"], label, control))
        state = res.json()
    return given


def log_events(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / LOG).read_text().splitlines()]


def test_batch_is_stored_as_answered_and_scores(tmp_path: Path) -> None:
    folder = conversation_study(tmp_path / "study")
    app = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8, seed=5)
    client = judge_client(app)
    assert client.get("/judge/api/state").json() == {"registered": False}
    state = start(client)
    assert (state["answered"], state["total"]) == (0, 8)
    first = state["trial"]
    # The view tells nothing about the source: no item id, source, model or agent anywhere.
    text = json.dumps({k: v for k, v in first.items() if k != "question"})
    for leak in ("human", "machine", "smollm2", "gemma3", '"p1"', "c1-0", "item"):
        assert leak not in text
    assert first["kind"] == "conversation" and len(first["messages"]) in (3, 6)
    assert first["control"]["question"] and len(first["control"]["options"]) == 5

    given = answer_all(client, state)
    events = log_events(folder)
    assert [e["kind"] for e in events] == ["judge"] + ["answer"] * 8
    assert [(e["position"], e["label"], e["control"]) for e in events[1:]] == given

    store = app.state.judging
    judge = next(iter(store.judges.values()))
    with (folder / HUMAN_JUDGEMENTS).open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8
    by_item = {t.item: t for t in judge.batch.trials}
    for row, (position, label, _) in zip(rows, given, strict=True):
        trial = judge.batch.trials[position]
        assert (row["item"], row["label"], row["source"]) == (trial.item, label, trial.source)
        assert row["judge_type"] == "human" and row["gender"] == "female"
        assert row["length"] == str(by_item[row["item"]].length)

    result = CliRunner().invoke(cli, ["itt", "score", str(folder / HUMAN_JUDGEMENTS), "--json",
                                      "--group-by", "english"])  # fmt: skip
    assert result.exit_code == 0, result.output
    scored = json.loads(result.output)
    hh = sum(1 for r in rows if r["source"] == "human" and r["label"] == "H")
    mm = sum(1 for r in rows if r["source"] == "machine" and r["label"] == "M")
    assert scored["overall"]["detectability"] == pytest.approx((hh / 4 + mm / 4) / 2)
    assert "fluent" in json.dumps(scored)

    # The batch is over: another answer is refused, nothing more is logged.
    res = client.post("/judge/api/answer", json={"position": 8, "label": "H"})
    assert res.status_code == 409 and "finished" in res.json()["error"]
    assert len(log_events(folder)) == 9


def test_missed_controls_exclude_the_judge(tmp_path: Path) -> None:
    folder = conversation_study(tmp_path / "study")
    app = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8, seed=1)
    good, bad = judge_client(app), judge_client(app)
    answer_all(good, start(good))
    answer_all(bad, start(bad, gender="male"), wrong_controls=True)
    store = app.state.judging
    screened = store.screened()
    assert list(screened.excluded_judges.values()) == [0.0]
    with (folder / HUMAN_JUDGEMENTS).open() as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == 8 and {r["gender"] for r in rows} == {"female"}
    assert len(log_events(folder)) == 2 + 16  # every answer is kept in the raw log

    assert TestClient(app).get("/judge/admin").status_code == 401
    page = TestClient(app).get("/judge/admin", auth=("admin", ADMIN_PASSWORD))
    assert page.status_code == 200
    assert "1 excluded" in page.text and page.text.count("<tr>") == 3
    csv_file = TestClient(app).get("/judge/admin/judgements.csv", auth=("a", ADMIN_PASSWORD))
    assert csv_file.content == (folder / HUMAN_JUDGEMENTS).read_bytes()
    assert TestClient(app).get("/judge/admin/log.jsonl").status_code == 401


def test_restart_resumes_the_same_batch(tmp_path: Path) -> None:
    folder = conversation_study(tmp_path / "study")
    app = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8, seed=2)
    client = judge_client(app)
    state = start(client)
    trials = []
    for _ in range(3):
        trials.append(state["trial"])
        control = state["trial"]["control"]["options"][0]
        pos = state["trial"]["position"]
        body = {"position": pos, "label": "M", "control": control}
        state = client.post("/judge/api/answer", json=body).json()
    with (folder / LOG).open("a") as fh:
        fh.write('{"kind": "answer", "judge": "torn')  # a write cut off mid-line
    again = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8, seed=2)
    resumed = TestClient(again)
    resumed.cookies.update(client.cookies)
    now = resumed.get("/judge/api/state").json()
    assert (now["answered"], now["trial"]) == (3, state["trial"])
    # The torn line was cut away: the next answer is logged whole and survives a restart.
    control = now["trial"]["control"]["options"][0]
    body = {"position": 3, "label": "H", "control": control}
    assert resumed.post("/judge/api/answer", json=body).status_code == 200
    third = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8, seed=2)
    assert len(next(iter(third.state.judging.judges.values())).answers) == 4
    old = app.state.judging.judges
    new = again.state.judging.judges
    assert [j.batch for j in old.values()] == [j.batch for j in new.values()]

    # A dataset changed under a running study is refused, not silently re-paired.
    responses = (folder / "responses.csv").read_text()
    (folder / "responses.csv").write_text(responses.replace("c1-5,", "c1-5x,"))
    assert open_judging(folder, batch_size=8, seed=2)  # same draws: items did not change
    lines = responses.splitlines()
    (folder / "responses.csv").write_text("\n".join(lines[:-6]) + "\n")  # drop c4
    with pytest.raises(ValueError, match="responses changed"):
        open_judging(folder, batch_size=6, seed=2)
    (folder / "responses.csv").write_text(responses.replace(",c3,", ",c0,"))  # new draw order
    with pytest.raises(ValueError, match="responses changed"):
        open_judging(folder, batch_size=8, seed=2)


def test_bad_input_gets_one_clear_line(tmp_path: Path) -> None:
    folder = conversation_study(tmp_path / "study")
    app = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8)
    client = judge_client(app)
    res = client.post("/judge/api/answer", json={"position": 0, "label": "H"})
    assert res.status_code == 400 and "not registered" in res.json()["error"]
    res = client.post("/judge/api/start", json={"consent": False, "demographics": FORM})
    assert "consent" in res.json()["error"]
    res = client.post("/judge/api/start", json={"consent": True, "demographics": FORM | {"age": 9}})
    assert res.status_code == 400 and res.json()["error"].startswith("age:")
    state = start(client)
    trial = state["trial"]
    for body, why in [
        ({"position": 1, "label": "H", "control": "music"}, "not the current one"),
        ({"position": 0, "label": "X", "control": trial["control"]["options"][0]}, "H or M"),
        ({"position": 0, "label": "H"}, "control question"),
        ({"position": 0, "label": "H", "control": "not an option"}, "control question"),
    ]:
        res = client.post("/judge/api/answer", json=body)
        assert res.status_code == 409 and why in res.json()["error"], res.text
    assert not any(e["kind"] == "answer" for e in log_events(folder))
    with pytest.raises(ValueError, match="not enough human or machine"):
        open_judging(folder, batch_size=20)


def test_images_and_scanpaths_are_served_safely(tmp_path: Path) -> None:
    folder = image_study(tmp_path / "study")
    app = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=4, seed=3)
    client = judge_client(app)
    state = start(client)
    kinds = set()
    while "trial" in state:
        t = state["trial"]
        kinds.add(t["kind"])
        assert t["image"].startswith("/judge/media/")
        assert "red.png" not in json.dumps(t) and "blue.png" not in json.dumps(t)
        if t["kind"] == "scanpath":
            assert t["fixations"] == [[20, 20], [100, 80], [150, 150]]
        else:
            assert t["text"] in (
                "a plain red square",
                "a plain blue square",
                "red block on white",
                "blue block on white",
            )
        assert t["control"]["options"] == ["true", "false"]
        image = client.get(t["image"])
        assert image.headers["content-type"] == "image/png"
        assert image.content[:4] == b"\x89PNG"
        state = client.post("/judge/api/answer", json={"position": t["position"], "label": "H",
                                                        "control": "true"}).json()  # fmt: skip
    assert kinds <= {"text", "scanpath"} and kinds
    assert client.get("/judge/media/7").status_code == 404
    assert client.get("/judge/media/..%2Fresponses.csv").status_code in (404, 422)

    (tmp_path / "secret.png").write_bytes(b"x")
    responses = (folder / "responses.csv").read_text()
    (folder / "responses.csv").write_text(responses.replace("images/red.png", "../secret.png"))
    with pytest.raises(ValueError, match="outside the study"):
        open_judging(folder, batch_size=4)


def test_mounted_in_the_arena_app(tmp_path: Path) -> None:
    from arena_fixtures import ADMIN_PASSWORD as ARENA_PASSWORD
    from arena_fixtures import make_setup
    from turinglab.arena.web.app import create_app

    folder = conversation_study(tmp_path / "study")
    app = create_app(make_setup(), admin_password=ARENA_PASSWORD,
                     judging=open_judging(folder, batch_size=8))  # fmt: skip
    with TestClient(app) as client:
        page = client.get("/judge")
        assert page.status_code == 200 and "judge.js" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        assert start(client)["total"] == 8
        assert client.get("/judge/admin").status_code == 401
        assert client.get("/judge/admin", auth=("a", ARENA_PASSWORD)).status_code == 200
        assert client.get("/static/judge.js").status_code == 200


def test_response_times_are_exported_and_the_min_rt_rule_applies(tmp_path: Path) -> None:
    folder = conversation_study(tmp_path / "study")
    app = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8, seed=3)
    client = judge_client(app)
    state = start(client)
    times = [1500, 4500, 2999, 3001, 800, 12000, 3000, 5000]  # ms as the page measured them
    while "trial" in state:
        trial = state["trial"]
        body = {"position": trial["position"], "label": "H",
                "control": topic_of(trial), "ms": times[trial["position"]]}  # fmt: skip
        state = client.post("/judge/api/answer", json=body).json()
    with (folder / HUMAN_JUDGEMENTS).open() as fh:
        rows = list(csv.DictReader(fh))
    assert [float(r["rt"]) for r in rows] == [t / 1000 for t in times]
    # The log keeps ms; a restart rebuilds the same rt from it.
    again = create_judging_app(folder, admin_password=ADMIN_PASSWORD, batch_size=8, seed=3)
    judge = next(iter(again.state.judging.judges.values()))
    assert [a.seconds for a in judge.answers] == [t / 1000 for t in times]

    # The paper's rule: responses made in 3 s or less are left out (4 of 8 here).
    path = str(folder / HUMAN_JUDGEMENTS)
    args = ["itt", "score", path, "--json", "--replicates", "100"]
    kept = CliRunner().invoke(cli, [*args, "--min-rt", "3"])
    assert kept.exit_code == 0, kept.output
    assert "4 of 8 left out" in kept.stderr
    assert json.loads(kept.stdout)["overall"]["n"] == 4


def topic_of(trial: dict[str, Any]) -> str:
    options = trial["control"]["options"]
    text = trial["messages"][0]["text"]
    return next(o for o in options if o in text or (XSS in text and o == "science"))

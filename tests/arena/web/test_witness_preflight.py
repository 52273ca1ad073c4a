"""`serve` times a study's AI witnesses before serving (issue 31: SmolLM2 replied in 68 s where
people took 11 s, so it could be told by its clock): each one's generation against the time
the study's delay model shows that reply after. A slow witness (a real chat-completions
server that waits before answering) is refused in one line naming it, with the measured and
the allowed time; ELIZA and a prompt server pass; `witness_timing: warn` serves it anyway.

The study's delay model is set fast here (0.02 s per character) so that the allowed time is
about 2.5 s and the slow server's 4 s is late on any machine: what is compared is the delay
model's time, not this machine's speed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import aiohttp
import pytest

from arena_fixtures import ADMIN_PASSWORD, make_setup, running_arena
from test_arena_admin_study import _post, _token
from turinglab.agents.eliza import ElizaAgent
from turinglab.agents.openai_compat import OpenAIChatAgent
from turinglab.arena.core.store_bridge import ArenaStore
from turinglab.arena.core.witness_preflight import (
    PROBES,
    Limits,
    Probe,
    measure_witness,
    planned_s,
    preflight_problem,
    witness_prompt,
)
from turinglab.arena.web.admin_keys import KeyAllowlist
from turinglab.bench.arena_services import free_port
from turinglab.games.interrogation_setup import AIWitness
from turinglab.games.two_party import TwoPartyExperiment
from turinglab.games.typing_delay import TypingDelay
from turinglab.store.database import Store
from turinglab.testing.fake_openai import FakeOpenAIServer, start_fake_server_process

pytest.importorskip("fastapi")

FAST_TYPING = {"per_char_mean": 0.02, "per_char_sd": 0.002}
SLOW_S = 4.0

CONFIG = """\
name: timing-check
store: {store}
agents:
  remote: {{kind: openai, model: fake-model, base_url: "{url}"}}
experiment:
  game: two-party
  interrogators: [eliza]
  ai_witnesses:
    - {{agent: eliza, persona: none}}
    - {{agent: remote, persona: persona, label: REMOTE-PERSONA}}
  typing_delay: true
  delay: {{per_char_mean: 0.02, per_char_sd: 0.002}}
arena:
  witness_timing: {policy}
  witness_reply_max_s: {reply_max_s}
"""


def experiment() -> TwoPartyExperiment:
    return TwoPartyExperiment.model_validate(
        {
            "game": "two-party",
            "interrogators": ["eliza"],
            "ai_witnesses": [{"agent": "eliza", "persona": "none"}],
            "delay": FAST_TYPING,
        }
    )


def check(
    tmp_path: Path, url: str, policy: str, reply_max_s: float = 30.0
) -> subprocess.CompletedProcess[str]:
    """`turinglab serve study.yaml --check` as a researcher runs it."""
    config = CONFIG.format(store=tmp_path / "s.db", url=url, policy=policy, reply_max_s=reply_max_s)
    (tmp_path / "study.yaml").write_text(config)
    env = {**os.environ, "TURINGLAB_ADMIN_PASSWORD": "pw-for-tests-1234"}
    cmd = [sys.executable, "-m", "turinglab", "serve", "study.yaml", "--check"]
    cmd += ["--port", str(free_port())]
    return subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )


def test_a_reply_fits_when_generated_in_its_planned_time_and_that_is_a_person_s() -> None:
    paper = TypingDelay()  # 1 s + 0.03 s per character read + Γ(2.5, 0.25) + 0.3 s per character
    planned = planned_s(paper, 20, 40)
    assert planned == pytest.approx(1 + 0.6 + 0.625 + 12.0)
    limits = Limits(deadline_s=60.0, reply_max_s=30.0)
    reply = "x" * 40
    assert Probe("q" * 20, reply, planned, planned).problem(limits) is None
    late = Probe("q" * 20, reply, planned + 0.1, planned).problem(limits)
    assert late is not None and "come late" in late
    long = "x" * 146  # SmolLM2 at max_tokens 60 (issue 31)
    slow_anyway = Probe("q" * 20, long, 2.0, planned_s(paper, 20, 146)).problem(limits)
    assert slow_anyway is not None and "shown after 46.0 s" in slow_anyway
    flagged = Probe("q", "", 61.0, planned_s(paper, 1, 0)).problem(limits)
    assert flagged is not None and "deadline" in flagged


def test_a_slow_witness_is_refused_in_one_line_naming_it(tmp_path: Path) -> None:
    with start_fake_server_process(latency_s=SLOW_S) as slow:
        done = check(tmp_path, slow.base_url, "refuse")
        asked = slow.stats()["completions"]
    assert done.returncode == 1, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    line = errors[0]
    assert "AI witness REMOTE-PERSONA cannot pass for a person" in line
    measured = float(line.split("for a person: ")[1].split(" s to generate")[0])
    allowed = float(line.split("shows after ")[1].split(" s")[0])
    assert measured >= SLOW_S > allowed > 1.0
    assert "witness_timing: warn" in line
    # ELIZA was measured and fits; the slow one was asked once untimed, then once: enough
    assert "AI witness ELIZA: fits the delay model" in done.stderr
    assert asked == 2
    assert "checks passed" not in done.stderr


def test_warn_serves_a_slow_witness_and_says_so(tmp_path: Path) -> None:
    with start_fake_server_process(latency_s=SLOW_S) as slow:
        done = check(tmp_path, slow.base_url, "warn")
    assert done.returncode == 0, done.stderr
    assert "AI witness REMOTE-PERSONA cannot pass for a person" in done.stderr
    assert "warning: arena.witness_timing is warn" in done.stderr
    assert "checks passed (--check: not serving)" in done.stderr


def test_fast_witnesses_pass(tmp_path: Path) -> None:
    with start_fake_server_process(latency_s=0.0) as fast:
        done = check(tmp_path, fast.base_url, "refuse")
        asked = fast.stats()["completions"]
    assert done.returncode == 0, done.stderr
    assert "AI witness REMOTE-PERSONA: fits the delay model" in done.stderr
    assert "AI witness ELIZA: fits the delay model" in done.stderr
    assert asked == 1 + len(PROBES)  # untimed first call, then every probe


def test_replies_too_long_for_a_person_s_time_are_refused_however_fast(tmp_path: Path) -> None:
    with start_fake_server_process(latency_s=0.0) as fast:
        done = check(tmp_path, fast.base_url, "refuse", reply_max_s=1.5)
    assert done.returncode == 1, done.stderr
    (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    # ELIZA's first reply is the one refused here: it is listed first
    assert "longer than people take (arena.witness_reply_max_s: 1.5 s" in line
    assert "max_tokens" in line


def test_skip_measures_nothing(tmp_path: Path) -> None:
    with start_fake_server_process(latency_s=SLOW_S) as slow:
        done = check(tmp_path, slow.base_url, "skip")
        asked = slow.stats()["requests"]
    assert done.returncode == 0, done.stderr
    assert asked == 0 and "AI witness" not in done.stderr


async def test_the_witness_is_asked_with_its_real_prompt(fake_server: FakeOpenAIServer) -> None:
    cfg = experiment()
    agent = OpenAIChatAgent(name="remote", base_url=fake_server.base_url, model="fake-model")
    witness = AIWitness(agent="remote", persona="persona")
    prompt = witness_prompt(witness, agent, cfg)
    assert prompt is not None
    try:
        found = await measure_witness("REMOTE-PERSONA", agent, prompt, cfg, reply_max_s=30)
    finally:
        await agent.aclose()
    assert found.fits and len(found.probes) == len(PROBES)
    sent = fake_server.last_request["messages"][0]["content"]
    assert f"Name: {prompt.facts.name}" in sent and sent.endswith(PROBES[-1])
    # ELIZA plays without a prompt, as in a game
    assert witness_prompt(AIWitness(agent="eliza", persona="persona"), ElizaAgent("e"), cfg) is None


async def test_a_witness_that_cannot_be_asked_is_refused() -> None:
    cfg = experiment()
    port = free_port()  # nothing listens there
    agent = OpenAIChatAgent(name="gone", base_url=f"http://127.0.0.1:{port}/v1", model="m")
    try:
        found = await measure_witness("GONE", agent, None, cfg, reply_max_s=30)
    finally:
        await agent.aclose()
    said: list[str] = []
    problem = preflight_problem([found], "refuse", said.append)
    assert problem is not None
    assert problem.startswith("AI witness GONE cannot pass for a person: could not be asked")
    assert said == [found.line()]


def test_the_no_config_demo_is_not_measured(tmp_path: Path) -> None:
    """`turinglab serve` with no config serves the embedded agents to a curious visitor: no
    study, no key, and no minute spent timing SmolLM2 before the lobby opens."""
    env = {**os.environ, "TURINGLAB_ADMIN_PASSWORD": "pw-for-tests-1234"}
    env.pop("TURINGLAB_STORE", None)
    cmd = [sys.executable, "-m", "turinglab", "serve", "--check", "--port", str(free_port())]
    done = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "checks passed" in done.stderr and "AI witness" not in done.stderr


async def test_a_reply_past_the_deadline_is_not_waited_for(fake_server: FakeOpenAIServer) -> None:
    fake_server.configure(latency_s=3.0)
    cfg = experiment().model_copy(update={"message_deadline_s": 1.0})
    assert fake_server.base_url is not None
    agent = OpenAIChatAgent(name="slow", base_url=fake_server.base_url, model="fake-model")
    try:
        found = await measure_witness("SLOW", agent, None, cfg, reply_max_s=30)
    finally:
        await agent.aclose()
    assert len(found.probes) == 1 and found.probes[0].generation_s >= 1.0
    assert found.problem == "no reply within the 1 s deadline (its games are flagged)"


async def test_a_study_opened_from_the_admin_is_timed_too(
    tmp_path: Path, fake_server: FakeOpenAIServer
) -> None:
    assert fake_server.base_url is not None
    fake_server.configure(latency_s=SLOW_S)
    study = CONFIG.format(
        store=tmp_path / "unused.db", url=fake_server.base_url, policy="refuse", reply_max_s=30
    )
    setup = make_setup()
    keys = KeyAllowlist.parse((), (fake_server.base_url,))
    auth = {"Authorization": aiohttp.encode_basic_auth("admin", ADMIN_PASSWORD)}
    kept = ArenaStore(Store(str(tmp_path / "a.db")), setup)
    with running_arena(setup, store=kept, studies_dir=tmp_path, admin_keys=keys) as (base, app):
        async with aiohttp.ClientSession() as http:
            token = await _token(http, base)
            form = {"csrf": token, "yaml": study}
            status, page = await _post(http, base + "/admin/study", form, **auth)
            assert status == 400
            assert "AI witness REMOTE-PERSONA cannot pass for a person" in page
            assert app.state.arena.setup is setup  # nothing was opened
            fake_server.configure(latency_s=0.0)
            status, page = await _post(http, base + "/admin/study", form, **auth)
            assert status == 303, page
            assert app.state.arena.setup is not setup

"""Participants of a study in Chromium (Playwright's async API, so several play at once), for
the end-to-end study tests: each arrives from a Prolific link in their own browser context,
consents, plays the role the server gives them (typing real keys), answers the survey and is
sent on to Prolific, whose pages are answered here and noted.

Every step waits for what the page shows, never for a fixed time: the machine may be busy.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from arena_fixtures import ADMIN_PASSWORD
from turinglab.arena.core.modes import ArenaSetup
from turinglab.arena.modes.setups import setup_from_config
from turinglab.config import load_config

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"]
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}
PROLIFIC = "https://app.prolific.com/"
CONFIGS = Path(__file__).parent.parent / "configs"
STEP_MS = 60_000  # the longest any one step may take on a very busy machine

# The redirect note's texts, as the page writes them (it must count down); said on the
# console so they outlive the page's navigation to Prolific.
NOTE_WATCH = """
document.addEventListener("DOMContentLoaded", () => {
  const note = document.getElementById("handoff-note");
  if (!note) return;
  new MutationObserver(() => console.log("handoff-note: " + note.textContent))
    .observe(note, { childList: true, characterData: true, subtree: true });
});
"""


def fast_study(config: str, *, rounds: int, max_wait_s: float, witness_wait_s: float) -> Any:
    """A shipped study config made quick: ELIZA the only AI witness (no model to load), no
    typing delays, short drawn waits, a 3-second hand-off; its texts, survey, codes and
    blind design as shipped."""
    data = yaml.safe_load((CONFIGS / config).read_text())
    data["experiment"]["ai_witnesses"] = [{"agent": "eliza", "persona": "none"}]
    data["experiment"]["typing_delay"] = False
    data["agents"], data["store"] = {}, None
    arena = data["arena"]
    arena["rounds"], arena["max_wait_s"] = rounds, max_wait_s
    design = {"wait_min_s": 0.2, "wait_max_s": 0.6, "witness_wait_s": witness_wait_s}
    arena["design"] = {**arena.get("design", {}), **design}
    arena["study"]["recruitment"]["redirect_after_s"] = 3
    return data


def setup_of(data: dict[str, Any], tmp_path: Path) -> ArenaSetup:
    path = tmp_path / f"{data['name']}.yaml"
    path.write_text(yaml.safe_dump(data))
    return setup_from_config(load_config(path))


def codes(data: dict[str, Any]) -> dict[str, str]:
    """Each end's code in the config: {"completion": "C1A2B3C4", …}."""
    recruitment = data["arena"]["study"]["recruitment"]
    return {end: recruitment[end]["code"] for end in recruitment if end != "redirect_after_s"}


def admin_get(base: str, path: str) -> Any:
    token = base64.b64encode(f"admin:{ADMIN_PASSWORD}".encode()).decode()
    request = urllib.request.Request(base + path, headers={"Authorization": f"Basic {token}"})
    with urllib.request.urlopen(request, timeout=60) as r:
        text = r.read().decode()
    if path.endswith(".jsonl"):
        return [json.loads(line) for line in text.splitlines() if line]
    return json.loads(text) if path.endswith(".json") else text


@dataclass
class Visitor:
    """One participant: their page, what Prolific saw of them, what went wrong on the page."""

    name: str
    pid: str
    page: Any
    landed: list[str] = field(default_factory=list)  # Prolific URLs the page was sent to
    notes: list[str] = field(default_factory=list)  # the redirect note's texts, in order
    errors: list[str] = field(default_factory=list)  # uncaught page errors
    failed: list[str] = field(default_factory=list)  # our own requests answered >= 400
    games: list[str] = field(default_factory=list)  # game ids played, in order
    roles: list[str] = field(default_factory=list)
    thanks: str = ""  # the thanks page's words, as the code was shown
    sent_on: str = ""  # what the survey page said when the study sent them there


async def arrive(browser: Any, base: str, name: str, viewport: dict[str, int] = DESKTOP) -> Visitor:
    """A participant from a Prolific study link (its three ids in the URL) in a fresh
    context (no cookies)."""
    phone = viewport["width"] < 600
    context = await browser.new_context(viewport=viewport, is_mobile=phone, has_touch=phone)
    page = await context.new_page()
    v = Visitor(name, hashlib.sha1(name.encode()).hexdigest()[:24], page)  # Prolific's form
    page.on("pageerror", lambda e: v.errors.append(str(e)))
    page.on("console", lambda m: _note(v, m.text))

    def failed(response: Any) -> None:
        if response.url.startswith(base) and response.status >= 400:
            v.failed.append(f"{response.status} {response.url}")

    page.on("response", failed)

    async def fulfil(route: Any) -> None:
        v.landed.append(route.request.url)
        await route.fulfill(status=200, content_type="text/html", body="<p>Prolific</p>")

    await page.route(PROLIFIC + "**", fulfil)
    await page.add_init_script(NOTE_WATCH)
    await page.goto(f"{base}/?PROLIFIC_PID={v.pid}&STUDY_ID=study-1&SESSION_ID=s-{name}")
    await page.locator("#v-lobby").wait_for(state="visible", timeout=STEP_MS)
    return v


def _note(v: Visitor, text: str) -> None:
    if text.startswith("handoff-note: "):
        said = text.removeprefix("handoff-note: ")
        if not v.notes or v.notes[-1] != said:
            v.notes.append(said)


async def join(v: Visitor, mode: str) -> None:
    """From the lobby: tick the consent box (once) and choose `mode` (its button's name)."""
    page = v.page
    await page.locator("#v-lobby").wait_for(state="visible", timeout=STEP_MS)
    if not await page.locator("#consent").is_checked():
        await page.locator("#consent").check()
    await page.get_by_role("button", name=mode, exact=True).click()


# Which view the page has come to after a join: a game being played, or the exit survey
# (all rounds done or excused, or nobody to play with).
NEXT = """() => {
  const seen = (id) => !document.getElementById(id).hidden;
  if (seen("v-game") && !seen("reveal") && document.querySelector("[data-input]")) return "game";
  if (seen("v-survey")) return "survey";
  return "";
}"""


async def next_stage(v: Visitor, timeout_ms: float = STEP_MS) -> str:
    handle = await v.page.wait_for_function(NEXT, timeout=timeout_ms)
    return str(await handle.json_value())


async def _type(v: Visitor, alias: str, text: str) -> None:
    box = v.page.locator(f'[data-input="{alias}"]')
    await v.page.wait_for_function(
        "a => !document.querySelector(`[data-input=\"${a}\"]`).readOnly", arg=alias,
        timeout=STEP_MS,
    )  # fmt: skip
    await box.focus()
    await v.page.keyboard.type(text, delay=2)
    await v.page.keyboard.press("Enter")


async def _replies(v: Visitor, alias: str, n: int) -> None:
    await v.page.wait_for_function(
        "([a, n]) => document.querySelectorAll(`[data-log=\"${a}\"] .msg.them`).length >= n",
        arg=[alias, n], timeout=STEP_MS,
    )  # fmt: skip


async def play_game(v: Visitor) -> str:
    """Play the game on screen in the role given: as interrogator, one message to each
    witness, their replies, "End & decide" (twice), a verdict; as witness, a reply to the
    interrogator. Returns at the reveal with the role played."""
    page = v.page
    said = await page.locator("#role").inner_text()
    role = "interrogator" if "interrogator" in said else "witness"
    v.roles.append(role)
    v.games.append(str(await page.evaluate("game.game")))
    aliases = await page.locator("[data-input]").evaluate_all(
        "els => els.map(e => e.dataset.input)"
    )
    if role == "interrogator":
        for alias in aliases:
            await _type(v, alias, f"hi {alias}, what did you have for breakfast?")
        for alias in aliases:
            await _replies(v, alias, 1)
        await page.locator("#end").click()
        await page.locator("#end").click()
        await page.locator("#verdict").wait_for(state="visible", timeout=STEP_MS)
        await page.locator('#choices input[type="radio"]').first.check()
        await page.locator("#reason").fill("the replies came as questions")
        await page.locator("#verdict button[type=submit]").click()
    else:
        await _replies(v, aliases[0], 1)
        await _type(v, aliases[0], "toast and tea, same as every day")
    await page.locator("#reveal").wait_for(state="visible", timeout=STEP_MS)
    return role


async def play_on(v: Visitor, mode: str) -> None:
    """Play whatever the study gives this person until it sends them to the survey: after
    each game "Play another game" (while the study has rounds left), else the survey."""
    while True:
        await join(v, mode)
        if await next_stage(v) == "survey":
            for note in ("#alldone", "#nomatch"):
                if await v.page.locator(note).is_visible():
                    v.sent_on = await v.page.locator(note).inner_text()
            return
        await play_game(v)
        if not await v.page.locator("#again").is_visible():  # the last round
            await v.page.locator("#to-survey").click()
            return
        await v.page.locator("#again").click()


async def again(v: Visitor) -> None:
    await v.page.locator("#again").click()
    await v.page.locator("#v-lobby").wait_for(state="visible", timeout=STEP_MS)


async def survey_and_code(v: Visitor) -> str:
    """Answer the exit survey (the required birth year, one more), wait for the code the
    server gives and for the redirect to Prolific. Returns the code shown."""
    page = v.page
    form = page.locator("#survey")
    await form.wait_for(state="visible", timeout=STEP_MS)
    await form.locator('[name="birth_year"]').fill("1990")
    await form.locator('[name="chatbot_use"]').select_option("Weekly")
    await form.locator("button[type=submit]").click()
    return await handed_off(v)


async def handed_off(v: Visitor) -> str:
    code = v.page.locator("#handoff-code")
    await v.page.wait_for_function(
        "() => document.getElementById('handoff-code').textContent.startsWith('Your code: ')",
        timeout=STEP_MS,
    )
    shown = (await code.inner_text()).removeprefix("Your code: ")
    v.thanks = await v.page.locator("#thanks-text").inner_text()
    await v.page.wait_for_url(PROLIFIC + "**", timeout=STEP_MS)
    return shown


async def decline(v: Visitor) -> str:
    """ "I do not agree" in the lobby: before taking part, or after (a withdrawal)."""
    await v.page.locator("#v-lobby").wait_for(state="visible", timeout=STEP_MS)
    await v.page.locator("#decline").click()
    return await handed_off(v)


async def together(*steps: Any) -> list[Any]:
    return list(await asyncio.gather(*steps))

// Response collection page. The server sends one stimulus at a time, measures the time taken
// and checks every rule; this page only shows what it is told, as text, never as HTML.
"use strict";

let trial = null;
let busy = false;

const api = apiAt("/respond/api/");

function showViolations(title, items) {
  $("violations").hidden = !title;
  $("violations-title").textContent = title || "";
  $("violations-list").replaceChildren(...(items || []).map((m) => el("li", null, m)));
}

function render(state) {
  if (showState(state) !== "v-trial") return;
  if (trial && trial.position === state.trial.position) return;
  trial = state.trial;
  drawTrial(trial);
}

function drawTrial(t) {
  const stim = $("stimulus");
  stim.replaceChildren();
  showViolations(null);
  const box = $("answer");
  box.value = "";
  if (t.task === "captioning") {
    const img = el("img", "picture");
    img.alt = "the picture to describe";
    img.src = t.image;
    stim.append(img);
    $("prompt").textContent = "Write one sentence that describes the picture.";
    $("rules").replaceChildren(...t.rules.map((r) => el("li", null, r)));
    box.className = "";
    box.rows = 3;
  } else if (t.task === "color-estimation" || t.task === "object-detection") {
    const img = el("img", "picture");
    img.alt = "the picture to answer about";
    img.src = t.image;
    stim.append(img);
    $("prompt").textContent = t.prompt;
    $("rules").replaceChildren();
    box.className = "word";
    box.rows = 1;
  } else {
    stim.append(el("p", "cue", t.cue));
    $("prompt").textContent = t.prompt;
    $("rules").replaceChildren();
    box.className = "word";
    box.rows = 1;
  }
  const pick = $("choice");
  pick.hidden = !t.choices;
  box.hidden = Boolean(t.choices);
  if (t.choices) {  // the colour task: one of the paper's colours, from a list
    pick.replaceChildren(el("option", null, "choose a colour…"), ...t.choices.map((c) => el("option", null, c)));
    pick.options[0].value = "";
    pick.focus();
  } else box.focus();
}

async function submit(event) {
  event.preventDefault();
  if (!trial || busy) return;
  busy = true;
  $("submit").disabled = true;
  try {
    const {ok, status, data} = await api("answer", {position: trial.position, text: trial.choices ? $("choice").value : $("answer").value});
    if (status === 422) {
      const items = data.violations.map((v) => v.message);
      showViolations("Not saved yet: please change your answer.", items.length ? items : [data.error]);
      render(data);
      return;
    }
    if (!ok) { showViolations("Not saved.", [data.error]); return; }
    render(data);
    window.scrollTo(0, 0);
  } catch (err) {
    showViolations("Not saved.", ["Could not reach the server; check the connection and try again."]);
  } finally {
    busy = false;
    $("submit").disabled = false;
  }
}

async function start(event) {
  event.preventDefault();
  const {ok, data} = await api("start", {consent: $("consent").checked});
  if (!ok) { $("start-error").textContent = data.error; return; }
  render(data);
}

window.addEventListener("DOMContentLoaded", async () => {
  $("start-form").addEventListener("submit", start);
  $("answer-form").addEventListener("submit", submit);
  $("answer").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) $("answer-form").requestSubmit();
  });
  render((await api("state")).data);
});

// ITT judging page. The server holds the batch and sends one trial at a time; every value
// from the dataset is put into the page as text (textContent / attributes), never as HTML.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
let trial = null;
let label = null;
let shownAt = 0;
let busy = false;

const api = apiAt("/judge/api/");

function render(state) {
  if (showState(state) !== "v-trial") return;
  if (trial && trial.position === state.trial.position) return;
  trial = state.trial;
  label = null;
  drawTrial(trial);
  shownAt = performance.now();
}

function drawTrial(t) {
  const stim = $("stimulus"), resp = $("response");
  stim.replaceChildren();
  resp.replaceChildren();
  $("trial-error").textContent = "";
  for (const b of document.querySelectorAll(".choice")) b.setAttribute("aria-pressed", "false");
  if (t.kind === "conversation") {
    const log = el("ol", "chat");
    log.setAttribute("aria-label", "Conversation");
    for (const m of t.messages) {
      const judged = m.speaker === t.side;
      const bubble = el("li", "msg " + (judged ? "judged" : "other"));
      // Screen readers hear who wrote each message, and which speaker is judged (the outline
      // says so only to the eye): "Speaker A (judged): …", as the chat pages announce theirs.
      const who = el("span", "who");
      who.append(el("span", "sr-only", "Speaker "), document.createTextNode(m.speaker),
        el("span", "sr-only", judged ? " (judged): " : ": "));
      bubble.append(who, el("span", "text", m.text));
      log.append(bubble);
    }
    resp.append(log);
  } else {
    if (t.stimulus) stim.append(el("p", "cue", t.stimulus));
    if (t.target) stim.append(el("p", "target", "Target: " + t.target));
    if (t.kind === "scanpath") stim.append(scanpath(t.image, t.fixations));
    else if (t.image) {
      const img = el("img", "picture");
      img.alt = "stimulus image";
      img.src = t.image;
      stim.append(img);
    }
    if (t.text) resp.append(el("p", "answer", t.text));
  }
  $("question").textContent = t.question;
  const ctl = $("control");
  ctl.hidden = true;
  $("control-options").replaceChildren();
  if (t.control) {
    $("control-question").textContent = t.control.question;
    t.control.options.forEach((opt, i) => {
      const b = el("button", "option");
      b.type = "button";
      b.dataset.option = opt;
      b.append(el("kbd", null, String(i + 1)), document.createTextNode(" " + opt));
      b.addEventListener("click", () => submit(opt));
      $("control-options").append(b);
    });
  }
}

// Fixations drawn one after another over the image (first 10, in image pixels).
function scanpath(src, fixations) {
  const box = el("div", "scanpath");
  const img = el("img", "picture");
  img.alt = "stimulus image";
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", "fixations");
  box.append(img, svg);
  img.addEventListener("load", () => {
    svg.setAttribute("viewBox", `0 0 ${img.naturalWidth} ${img.naturalHeight}`);
    const r = Math.max(img.naturalWidth, img.naturalHeight) / 40;
    let prev = null;
    fixations.forEach(([x, y], i) => {
      setTimeout(() => {
        if (prev) {
          const line = document.createElementNS(SVG, "line");
          line.setAttribute("x1", prev[0]); line.setAttribute("y1", prev[1]);
          line.setAttribute("x2", x); line.setAttribute("y2", y);
          svg.prepend(line);  // paths under the dots
        }
        const dot = document.createElementNS(SVG, "circle");
        dot.setAttribute("cx", x); dot.setAttribute("cy", y); dot.setAttribute("r", r);
        const num = document.createElementNS(SVG, "text");
        num.setAttribute("x", x); num.setAttribute("y", y); num.setAttribute("font-size", r);
        num.textContent = String(i + 1);
        svg.append(dot, num);
        prev = [x, y];
      }, 400 * i);
    });
  });
  if (src) img.src = src;
  return box;
}

function choose(l) {
  if (!trial || busy) return;
  label = l;
  for (const b of document.querySelectorAll(".choice")) {
    b.setAttribute("aria-pressed", String(b.dataset.label === l));
  }
  if (trial.control) {
    $("control").hidden = false;
    $("control-options").querySelector("button").focus();
  } else submit(null);
}

async function submit(control) {
  if (!trial || !label || busy) return;
  busy = true;
  try {
    const ms = Math.round(performance.now() - shownAt);
    const {ok, data} = await api("answer", {position: trial.position, label, control, ms});
    if (!ok && !data.registered) { $("trial-error").textContent = data.error; return; }
    if (!ok) $("trial-error").textContent = data.error;
    render(data);
    window.scrollTo(0, 0);
  } catch (err) {
    $("trial-error").textContent = "Could not save your answer; check the connection and try again.";
  } finally {
    busy = false;
  }
}

async function start(event) {
  event.preventDefault();
  const demographics = {
    age: Number($("age").value) || null, gender: $("gender").value,
    education: $("education").value, english: $("english").value,
  };
  const {ok, data} = await api("start", {consent: $("consent").checked, demographics});
  if (!ok) { $("start-error").textContent = data.error; return; }
  render(data);
}

document.addEventListener("keydown", (e) => {
  if ($("v-trial").hidden || e.ctrlKey || e.metaKey || e.altKey) return;
  const key = e.key.toLowerCase();
  if (key === "h" || key === "m") choose(key.toUpperCase());
  else if (label && trial && trial.control && /^[1-9]$/.test(key)) {
    const opt = trial.control.options[Number(key) - 1];
    if (opt) submit(opt);
  }
});

window.addEventListener("DOMContentLoaded", async () => {
  for (const b of document.querySelectorAll(".choice")) {
    b.addEventListener("click", () => choose(b.dataset.label));
  }
  $("start-form").addEventListener("submit", start);
  render((await api("state")).data);
});

// Strong Turing Test view. The server sends one "strong" frame with the viewer's whole state
// whenever it changes; this file renders the last one (text through textContent, images only
// as data: URLs in <img src>) and sends what the person does, inputs through inputs.js's
// sendInput (applied once, re-sent after a reconnect). Uses arena.js's $, el, send, show, toast.
"use strict";

const STRONG_MAX_IMAGE = 2 * 1024 * 1024;
let strong = null; // the last state frame

const STRONG_HINTS = {
  investigator: {
    asking: (s) => s.history.length
      ? "Write your next message, or end the session."
      : "Write your first message. It goes to an AI and to one or more people; you will see their replies side by side, without names.",
    waiting: () => "Waiting for the replies…",
    choosing: () => "Which reply do you prefer? Choose one, or call it a tie.",
  },
  respondent: {
    answering: () => "Reply to the investigator. Your reply is shown beside the others, without names.",
    waiting: (s) => s.history.length ? "Waiting for the investigator…" : "Waiting for the investigator's first message…",
  },
};
// The live integrative test: a judge questions A and B (a person and an AI) at once.
const ITT_HINTS = {
  investigator: {
    asking: (s) => s.history.length
      ? "Ask your next question. It goes to both A and B."
      : "Ask your first question. It goes to A and B: one is a person, one is an AI. Each answers without seeing the other.",
    waiting: () => "Waiting for both answers…",
    verdict: () => "That was the last exchange. Which of A and B is the human?",
  },
  respondent: {
    answering: () => "Answer the judge's question. The judge sees your answer beside the AI's, under a letter.",
    waiting: (s) => s.history.length ? "Waiting for the judge…" : "Waiting for the judge's first question…",
  },
};
let verdictBox = null; // kept across renders so a half-typed reason survives new frames

function onStrong(f) {
  const fresh = !strong || strong.game !== f.game;
  strong = f;
  if (fresh) verdictBox = null;
  show("v-strong");
  if (fresh) resetComposer();
  renderStrong();
}

function renderStrong() {
  const s = strong;
  const judge = s.role === "investigator";
  const fixed = s.labels.length > 0; // the live integrative test: answerers A and B, a verdict
  $("s-role").textContent = fixed ? (judge ? "Judge" : "Human agent") : (judge ? "Investigator" : "Respondent");
  $("s-mode").textContent = s.title + (s.practice ? " · practice" : "");
  // Study sessions are rounds like the chat games' (practice never counts).
  $("s-round").hidden = !s.rounds;
  if (s.rounds) $("s-round").textContent = `Round ${s.rounds.played} of ${s.rounds.total}`;
  const played = s.history.filter((t) => t.decided).length;
  const now = s.phase === "asking" ? s.history.length + 1 : Math.max(s.history.length, 1);
  $("s-turn").textContent = `Turn ${Math.min(now, s.turns)} of ${s.turns}` + (played ? ` · ${played} decided` : "");
  const hints = (fixed ? ITT_HINTS : STRONG_HINTS)[s.role] || {};
  $("s-hint").textContent = s.phase === "ended" ? "The session has ended." : (hints[s.phase] || (() => ""))(s);
  $("s-end").hidden = !s.can_end;
  const writing = (judge && s.phase === "asking") || (!judge && s.phase === "answering");
  $("s-compose").hidden = !writing;
  $("s-attach").hidden = !judge || fixed; // the live integrative test is text only
  $("s-text-label").textContent = fixed
    ? (judge ? "Your question to A and B" : "Your answer")
    : (judge ? "Your message to all respondents" : "Your reply");
  $("s-text").maxLength = s.max_chars;
  countStrong();
  const list = $("s-turns");
  const had = document.activeElement; // in the verdict box (kept across renders), say
  list.replaceChildren(...s.history.map((t) => renderTurn(t, s)));
  if (s.brief) list.prepend(el("li", "card wide warn s-brief", s.brief));
  if (s.phase === "verdict") list.append(verdictBox || (verdictBox = renderVerdict(s)));
  if (had && had !== document.activeElement && had.isConnected) had.focus({ preventScroll: true });
  renderScores(s);
  landStrong(s, writing);
  const last = list.lastElementChild;
  if ((s.phase === "choosing" || s.phase === "verdict") && last) last.scrollIntoView({ behavior: "smooth", block: "start" });
  else if (writing) $("s-compose").scrollIntoView({ behavior: "smooth", block: "nearest" });
}

// Focus follows the session: the message box when it is this person's turn to write, the
// turn just sent while its replies are awaited, the replies once they are in, the verdict,
// the results. Each render rebuilds the turns, so focus on one of them is put back too.
let strongStage = null;
function landStrong(s, writing) {
  const stage = `${s.game}:${s.phase}:${s.history.length}`;
  if (stage === strongStage && !focusLost()) return;
  const fresh = stage !== strongStage;
  strongStage = stage;
  const last = $("s-turns").lastElementChild;
  if (s.phase === "ended") {
    if (fresh) announce([$("s-end-title").textContent, $("s-outcome-line").textContent].join(". "));
    focusOn($("s-end-title"));
  } else if (writing) focusOn($("s-text"));
  else if (s.phase === "verdict" && last) focusOn(last.querySelector("h2"));
  else if (s.phase === "choosing" && last) focusOn(last.querySelector(".s-replies") || last.querySelector("h2"));
  else if (last && last.dataset.turn) focusOn(last.querySelector("h2"));
  else focusOn($("s-hint"));
}

function renderTurn(t, s) {
  const li = el("li", "card wide s-turn");
  li.dataset.turn = String(t.turn);
  li.append(el("h2", "", `Turn ${t.turn}`));
  const q = el("div", "s-question");
  const asker = s.labels.length ? "The judge asked" : "The investigator asked";
  q.append(el("span", "muted", s.role === "investigator" ? "You asked" : asker));
  q.append(el("p", "s-text", t.question));
  for (const url of t.images) {
    if (!url.startsWith("/arena/media/")) continue; // the server's media route, nothing else
    const img = el("img", "s-image");
    img.src = url;
    img.alt = "Image attached by the investigator";
    q.append(img);
  }
  li.append(q);
  if (t.your_reply !== null && t.your_reply !== undefined && !t.replies.length) {
    const mine = el("div", "s-own");
    mine.append(el("span", "muted", s.labels.length ? "Your answer" : "Your reply"), el("p", "s-text", t.your_reply));
    li.append(mine);
  }
  const choosing = s.phase === "choosing" && !t.decided && t.turn === s.history.length;
  if (t.replies.length) {
    const grid = el("div", "s-replies");
    grid.setAttribute("role", "group");
    grid.setAttribute("aria-label", `Replies to turn ${t.turn}`);
    for (const r of t.replies) {
      const preferred = t.decided && t.chosen === r.label;
      const card = el("article", "s-reply" + (preferred ? " chosen" : "") + (t.tie ? " tied" : ""));
      card.dataset.label = String(r.label);
      const head = el("header", "");
      head.append(el("strong", "", s.labels.length ? `Agent ${s.labels[r.label - 1]}` : `Reply ${r.label}`));
      if (r.yours) head.append(el("span", "tag mine", "yours"));
      if (preferred) head.append(el("span", "tag win", "preferred"));
      card.append(head, el("p", "s-text", r.text));
      if (r.author) card.append(el("p", `s-author ${r.kind}`, r.kind === "human" ? "A person" : `An AI: ${r.author}`));
      if (choosing) {
        const b = el("button", "primary s-pick", `Prefer reply ${r.label}`);
        b.type = "button";
        b.addEventListener("click", () => pickStrong({ type: "preference", reply: r.label }));
        card.append(b);
      }
      grid.append(card);
    }
    li.append(grid);
  }
  if (choosing) {
    const tie = el("button", "ghost s-tie", "It's a tie");
    tie.type = "button";
    tie.addEventListener("click", () => pickStrong({ type: "preference", tie: true }));
    li.append(tie);
  }
  if (t.decided) li.append(el("p", "s-outcome", t.tie ? "The investigator called it a tie." : `The investigator preferred reply ${t.chosen}.`));
  return li;
}

function renderVerdict(s) {
  const box = el("li", "card wide s-verdict verdict");
  box.append(el("h2", "", "Your verdict: which of A and B is the human?"));
  const label = el("label", "", "How sure are you? ");
  label.htmlFor = "s-confidence";
  const out = el("output", "", "50");
  const range = el("input");
  range.type = "range"; range.min = "0"; range.max = "100"; range.value = "50"; range.id = "s-confidence";
  range.addEventListener("input", () => { out.textContent = range.value; });
  label.append(out);
  const scale = el("div", "scale");
  scale.append(el("span", "", "total guess"), el("span", "", "totally sure"));
  const why = el("label", "", "Why? (a sentence or two)");
  why.htmlFor = "s-reason";
  const reason = el("textarea");
  reason.id = "s-reason"; reason.rows = 3; reason.maxLength = 1000;
  box.append(label, range, scale, why, reason);
  const row = el("div", "actions");
  for (const name of s.labels) {
    const b = el("button", "primary s-human", `${name} is the human`);
    b.type = "button";
    b.addEventListener("click", () => pickStrong({ type: "verdict", choice: name, confidence: Number(range.value), reason: reason.value.trim() }));
    row.append(b);
  }
  box.append(row);
  return box;
}

function renderScores(s) {
  $("s-end-card").hidden = s.phase !== "ended";
  // After the last round the only way on is the exit survey (a flagged one gave it back).
  const last = s.phase === "ended" && s.rounds && !s.flagged && s.rounds.played >= s.rounds.total;
  $("s-again").hidden = Boolean(last);
  $("s-survey").className = last ? "primary" : "ghost";
  if (last) allDone(s.rounds);
  $("s-end-title").textContent = s.labels.length ? "Who was who" : "Results";
  const [headline, ...more] = (s.outcome || "").split("\n");
  $("s-outcome-line").textContent = headline;
  $("s-outcome-more").textContent = more.join(" ");
  $("s-outcome-more").hidden = !more.length;
  $("s-flagged").hidden = !s.flagged;
  $("s-flagged").textContent = s.flagged || "";
  const box = $("s-scores");
  box.replaceChildren();
  for (const sc of s.scores || []) {
    const card = el("div", `side ${sc.kind}`);
    card.append(el("span", "muted", sc.kind === "human" ? "Human respondent" : "AI"));
    card.append(el("strong", "", sc.you ? "You" : sc.kind === "human" ? "A person" : sc.name));
    const rate = sc.win_rate === null ? "no decided turns" : `win rate ${Math.round(sc.win_rate * 100)}% (${sc.wins} of ${sc.turns}; ties count ½)`;
    card.append(el("span", "s-rate", rate));
    box.append(card);
  }
}

function pickStrong(frame) {
  for (const b of document.querySelectorAll(".s-pick, .s-tie, .s-human")) b.disabled = true;
  sendInput(frame);
}

function countStrong() {
  if (!strong) return;
  const n = $("s-text").value.length;
  $("s-count").textContent = `${n}/${strong.max_chars}`;
  $("s-count").classList.toggle("over", n > strong.max_chars);
}

function resetComposer() {
  $("s-text").value = "";
  $("s-image").value = "";
  $("s-preview").replaceChildren();
  $("s-preview").hidden = true;
}

async function sendStrong(e) {
  e.preventDefault();
  const text = $("s-text").value.trim();
  if (!text) { toast("Type a message first."); return; }
  const frame = { type: "message", channel: "A", text };
  const file = $("s-image").files[0];
  const button = $("s-compose").querySelector("button[type=submit]");
  button.disabled = true;
  try {
    if (file) {
      if (file.size > STRONG_MAX_IMAGE) { toast("Images are limited to 2 MB."); return; }
      const r = await fetch("/arena/image", { method: "POST", body: file, credentials: "same-origin", headers: { "Content-Type": file.type || "application/octet-stream" } });
      const body = await r.json().catch(() => ({}));
      if (!r.ok) { toast(body.error || "The image could not be uploaded."); return; }
      frame.image = body.id;
    }
    sendInput(frame);
    resetComposer();
  } finally {
    button.disabled = false;
  }
}

function previewStrong() {
  const box = $("s-preview");
  box.replaceChildren();
  const file = $("s-image").files[0];
  box.hidden = !file;
  if (!file) return;
  if (!["image/png", "image/jpeg"].includes(file.type)) { toast("Only PNG or JPEG images."); $("s-image").value = ""; box.hidden = true; return; }
  const reader = new FileReader(); // a data: URL: the page's CSP allows no blob: images
  reader.onload = () => {
    const img = el("img", "s-image small");
    img.src = String(reader.result);
    img.alt = "The image you are about to send";
    box.append(img);
  };
  reader.readAsDataURL(file);
}

document.addEventListener("DOMContentLoaded", () => {
  $("s-compose").addEventListener("submit", sendStrong);
  $("s-text").addEventListener("input", countStrong);
  $("s-text").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); $("s-compose").requestSubmit(); }
  });
  $("s-image").addEventListener("change", previewStrong);
  $("s-end").addEventListener("click", () => {
    const b = $("s-end");
    if (b.dataset.armed === "1") { sendInput({ type: "end" }); return; }
    b.dataset.armed = "1";
    b.textContent = "Click again to end";
    setTimeout(() => { b.dataset.armed = ""; b.textContent = "End the session"; }, 4000);
  });
  $("s-again").addEventListener("click", () => { strong = null; send({ type: "leave" }); });
  $("s-survey").addEventListener("click", () => show("v-survey"));
});

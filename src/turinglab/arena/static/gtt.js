// People in the Generalized Turing Test (arena/modes/gtt_mode.py). The server sends one "gtt" frame
// with the viewer's whole state whenever it changes; this file renders the last one (every text
// through textContent) and sends what the person does, inputs through inputs.js's sendInput
// (applied once, re-sent after a reconnect). Uses arena.js's $, el, send, show, toast and
// guardComposer.
"use strict";

let gtt = null; // the last state frame

const GTT_ROLES = { distinguisher: "You are the judge", actor: "You are the imitator", spectator: "Watching" };
const GTT_SPEAKERS = { judge: "Judge", unknown: "X", querier: "Imitator", specimen: "Fresh copy" };

function onGTT(f) {
  const fresh = !gtt || gtt.game !== f.game;
  gtt = f;
  show("v-gtt");
  if (fresh) {
    $("g-chats").replaceChildren();
    $("g-reason").value = "";
    $("g-confidence").value = "50";
    $("g-conf-out").textContent = "50";
    for (const r of document.querySelectorAll('input[name="g-choice"]')) r.checked = false;
  }
  renderGTT();
}

function gttHint(s) {
  if (s.phase === "ended") return "The game has ended.";
  if (s.role === "spectator") return "The models are playing; new messages appear as they are written.";
  if (s.phase === "verdict") return "You have used all your messages: give your verdict now.";
  if (s.phase === "waiting") return "Waiting for a reply…";
  if (s.chat === "study") return "Your turn in the study chat. Press “Done studying” when you are ready for the test.";
  if (s.role === "distinguisher") {
    return s.can_decide ? "Your turn: write your next message, or give your verdict below." : "Your turn: write your first message to X.";
  }
  return "Your turn: answer the judge as its own model would.";
}

function gttPane(chat) {
  let pane = document.querySelector(`[data-gchat="${chat.name}"]`);
  if (pane) return pane;
  pane = el("section", "chat g-chat");
  pane.dataset.gchat = chat.name;
  pane.setAttribute("aria-label", chat.title);
  const head = el("header");
  head.append(el("span", "", chat.title));
  const log = el("ol", "log");
  log.setAttribute("aria-live", "polite");
  const status = el("div", "typing");
  status.setAttribute("role", "status"); // "Waiting for a reply…" is announced, politely
  pane.append(head, log, status);
  if (gtt.role !== "spectator") pane.append(gttComposer(chat.name));
  const box = $("g-chats");
  if (chat.name === "study") box.prepend(pane); else box.append(pane);
  return pane;
}

function gttComposer(name) {
  const form = el("form", "composer");
  const input = el("textarea");
  input.rows = 1;
  input.setAttribute("aria-label", name === "study" ? "Message to the study chat" : "Message to the test chat");
  const btn = el("button", "primary", "Send");
  btn.type = "submit";
  guardComposer(input, form);
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text) return;
    if (text.length > gtt.max_chars) { toast(`At most ${gtt.max_chars} characters.`); return; }
    sendInput({ type: "message", channel: name, text });
    input.value = "";
  });
  form.append(input, btn);
  return form;
}

const GTT_ANSWER = /^\s*<answer>\s*([01])\s*<\/answer>\s*$/i;

function gttNote(line, spectator) {
  // The game's control words (a querier's STOP, a bare verdict tag) shown as what they mean.
  const who = spectator ? GTT_SPEAKERS[line.sender] || line.sender : (line.sender === "you" ? "You" : "The judge");
  if (/^\W*stop\W*$/i.test(line.text) && (line.sender === "you" || line.sender === "querier")) {
    return `${who} ended the study chat.`;
  }
  const answer = GTT_ANSWER.exec(line.text);
  if (!answer) return null;
  if (gtt.role === "actor") return `The judge's verdict: ${answer[1] === "1" ? "you are its own model" : "you are an imitator"}.`;
  const target = gtt.target || "the model";
  const whose = who === "You" ? "Your" : `${who}'s`;
  return `${whose} verdict: ${answer[1] === "1" ? `X is ${target}` : "X is an imitator"}.`;
}

// Who wrote a line, in words: a spectator's roles, or for a player "You" and the other side
// of that chat (a fresh copy of the model in the study chat; X, or the judge, in the test).
function gttSpeaker(line, chat, spectator) {
  if (spectator) return GTT_SPEAKERS[line.sender] || line.sender;
  if (line.sender === "you") return "You";
  if (chat === "study") return "Fresh copy";
  return gtt.role === "actor" ? "The judge" : "X";
}

function gttLine(line, spectator, chat) {
  const note = gttNote(line, spectator);
  if (note) {
    const li = el("li", "msg game");
    li.append(el("span", "sr-only", "Game: "), document.createTextNode(note));
    return li;
  }
  // A spectator sees the roles: the judge and the copy on the left, X and the querier opposite.
  const side = spectator ? (line.sender === "judge" || line.sender === "specimen" ? "them" : "you") : line.sender;
  const li = el("li", `msg ${side}${spectator ? " watched" : ""}`);
  // Screen readers hear who wrote each line (the log is announced); spectators see it too.
  const who = gttSpeaker(line, chat, spectator);
  if (spectator) { const tag = el("span", "who", who); tag.append(el("span", "sr-only", ":")); li.append(tag); }
  else li.append(el("span", "sr-only", `${who}: `));
  li.append(document.createTextNode(line.text));
  const t = el("time", "", new Date(line.at * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
  t.dateTime = new Date(line.at * 1000).toISOString();
  li.append(t);
  return li;
}

function renderGTT() {
  const s = gtt;
  const spectator = s.role === "spectator";
  $("g-role").textContent = GTT_ROLES[s.role];
  $("g-mode").textContent = s.title + (s.practice ? " · practice" : "");
  $("g-turns").textContent = s.turns_left !== null && s.phase !== "ended" ? `${s.turns_left} messages left` : "";
  $("g-brief").textContent = s.brief;
  $("g-hint").textContent = gttHint(s);
  $("g-stop").hidden = !s.can_stop;
  const active = s.chat || (s.chats.length ? s.chats[s.chats.length - 1].name : null);
  for (const chat of s.chats) {
    const pane = gttPane(chat);
    const log = pane.querySelector(".log");
    if (log.children.length > chat.lines.length) log.replaceChildren();
    for (const line of chat.lines.slice(log.children.length)) log.append(gttLine(line, spectator, chat.name));
    log.scrollTop = log.scrollHeight;
    const busy = (s.phase === "waiting" || s.phase === "watching") && chat.name === active;
    pane.querySelector(".typing").textContent = busy ? (spectator ? "The models are writing…" : "Waiting for a reply…") : "";
    // Once the test has begun, the study chat is history: smaller, without a composer.
    const past = chat.name === "study" && s.chat !== "study" && s.chats.some((c) => c.name === "test" && c.lines.length);
    pane.classList.toggle("g-past", past);
    const form = pane.querySelector("form");
    if (!form) continue;
    const mine = s.phase === "writing" && s.chat === chat.name;
    form.hidden = s.phase === "ended" || past;
    const input = form.querySelector("textarea");
    input.disabled = !mine;
    input.maxLength = s.max_chars;
    input.placeholder = mine ? "Type a message (Enter sends)" : "Not your turn";
    form.querySelector("button").disabled = !mine;
    if (mine && focusLost()) focusOn(input); // a new game, or the box just given back
  }
  renderGTTVerdict(s);
  renderGTTEnd(s);
  // A spectator has no box to type in: focus goes to the brief, the new game's first words.
  if (spectator && focusLost() && !s.reveal) focusOn($("g-brief"));
}

function renderGTTVerdict(s) {
  const form = $("g-verdict");
  const was = form.hidden;
  form.hidden = !s.can_decide;
  if (form.hidden) return;
  $("g-target-label").textContent = `It is ${s.target}`;
  form.querySelector("button").disabled = false;
  if (was && s.phase === "verdict") {
    announce("You have used all your messages: give your verdict now.");
    focusOn($("g-verdict-title"));
    form.scrollIntoView({ behavior: "smooth", block: "start" });
  }
}

function renderGTTEnd(s) {
  const card = $("g-end");
  card.hidden = !s.reveal;
  if (!s.reveal) return;
  const r = s.reveal;
  $("g-outcome").textContent = r.outcome;
  $("g-flagged").hidden = !r.flagged;
  $("g-flagged").textContent = r.flagged || "";
  const sides = $("g-sides");
  sides.replaceChildren();
  const facts = [
    ["The model in question", r.target, "ai"],
    ["X was", r.unknown, r.unknown.startsWith("you") ? "human" : "ai"],
    ["The judge", r.judge, r.judge === "you" ? "human" : "ai"],
  ];
  for (const [label, value, kind] of facts) {
    const box = el("div", `side ${kind}`);
    box.append(el("span", "muted", label), el("strong", "", value));
    sides.append(box);
  }
  if (!card.dataset.shown || card.dataset.shown !== s.game) {
    card.dataset.shown = s.game;
    announce(`${$("g-end-title").textContent}. ${r.outcome}`);
    focusOn($("g-end-title"));
    card.scrollIntoView({ behavior: "smooth", block: "start" });
  }
}

document.addEventListener("DOMContentLoaded", () => {
  $("g-confidence").addEventListener("input", () => { $("g-conf-out").textContent = $("g-confidence").value; });
  $("g-stop").addEventListener("click", () => sendInput({ type: "end" }));
  $("g-verdict").addEventListener("submit", (e) => {
    e.preventDefault();
    const choice = document.querySelector('input[name="g-choice"]:checked');
    if (!choice) { toast("Choose an answer first."); return; }
    sendInput({ type: "verdict", choice: choice.value, confidence: Number($("g-confidence").value), reason: $("g-reason").value.trim() });
    $("g-verdict").querySelector("button").disabled = true;
  });
  $("g-again").addEventListener("click", () => send({ type: "leave" }));
  $("g-survey").addEventListener("click", () => show("v-survey"));
});

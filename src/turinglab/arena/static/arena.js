// Turing Lab arena client. The server is authoritative: this file only renders the frames it
// receives (every text through textContent, never innerHTML) and sends what the person does.
"use strict";

const $ = (id) => document.getElementById(id);
const VIEWS = ["v-lobby", "v-waiting", "v-game", "v-strong", "v-gtt", "v-survey", "v-thanks"];
const TYPING_SHOW_MS = 3500;
const TYPING_SEND_MS = 2000;
// The protocol (which frames are taken, where the page is in its game stream, inputs kept
// and re-sent, heartbeats, reconnect delays) is protocol.js's, through inputs.js's `page`.

let ws = null;
let game = null; // the last snapshot, updated by message/phase/reveal frames
let clockSkew = 0; // server time − local time, seconds
let lastTypingSent = 0;
const typingTimers = {};

let shownView = null; // the view on screen: focus moves only when it changes

function show(id) {
  for (const v of VIEWS) $(v).hidden = v !== id;
  const was = shownView;
  shownView = id;
  if (was === id || !was) return; // the first view is where the page opens: no focus moved
  // A view that opens on a heading: focus goes there once its texts are in (callers fill
  // them in right after), so keyboard and screen-reader users start at the new content
  // rather than at the top of a page whose old content has gone. Games focus their own.
  const heading = { "v-lobby": "modes-title", "v-waiting": "waiting-title", "v-survey": "survey-title", "v-thanks": "thanks-title" }[id];
  if (heading) setTimeout(() => { if (shownView === id) focusOn($(heading)); }, 0);
}

// Focus on what has just appeared (made focusable for scripts only when it is not already).
function focusOn(target) {
  if (!target) return;
  if (!target.matches("a[href], button, input, select, textarea, [tabindex]")) target.tabIndex = -1;
  target.focus(); // scrolled into sight as needed (callers may scroll on, smoothly)
}

// Said by screen readers without moving focus (#announcer is a polite live region): emptied
// first, so the same words said twice are announced twice.
function announce(text) {
  const box = $("announcer");
  box.textContent = "";
  setTimeout(() => { box.textContent = text; }, 50);
}

// Focus was dropped (its element hidden or replaced): it is on the body, or on nothing.
function focusLost() {
  const a = document.activeElement;
  return !a || a === document.body || !a.isConnected || a.closest("[hidden]") !== null;
}

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function toast(text) {
  const t = $("toast");
  t.textContent = text;
  t.hidden = false;
  clearTimeout(toast.timer);
  toast.timer = setTimeout(() => { t.hidden = true; }, 4000);
}

function connected() {
  return ws && ws.readyState === WebSocket.OPEN;
}

function send(frame) {
  if (connected()) ws.send(JSON.stringify(frame));
  else toast("Not connected — reconnecting…");
}

function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const at = page.query();
  const query = at ? `?${new URLSearchParams(at)}` : "";
  const socket = new WebSocket(`${proto}//${location.host}/ws${query}`);
  ws = socket;
  page.connecting(Date.now());
  setTimeout(() => { if (ws === socket && socket.readyState === WebSocket.CONNECTING) heartbeat(); }, PROTOCOL.OPEN_MS + 50);
  socket.onopen = () => { page.opened(Date.now()); studySocketOpened(); setConn(true); };
  socket.onmessage = (e) => { if (ws === socket) onFrame(JSON.parse(e.data)); };
  socket.onclose = (e) => {
    if (ws !== socket) return; // an old socket, already replaced
    setConn(false);
    const next = page.closed(e.code, Math.random());
    if (next.reload) { toast("Your session expired; reloading…"); setTimeout(() => location.reload(), 1500); return; }
    setTimeout(connect, next.delay_ms);
  };
}

// The heartbeat: ping and re-send what is overdue; a server silent too long is gone (also a
// handshake that hangs): the socket is closed and opened again.
function heartbeat() {
  if (!ws) return;
  const socket = ws.readyState === WebSocket.OPEN ? "open" : ws.readyState === WebSocket.CONNECTING ? "connecting" : "closed";
  const beat = page.tick(Date.now(), socket);
  if (beat.dead) { const gone = ws; gone.close(); gone.onclose({ code: 1006 }); ws = null; return; }
  if (beat.late) toast("The server is not answering yet; still trying. Nothing you typed is lost.");
  sendAll(beat.sends);
}

function setConn(ok) {
  const c = $("conn");
  c.textContent = ok ? "connected" : "reconnecting…";
  c.className = "conn " + (ok ? "ok" : "bad");
  if (game) updateComposers();
}

// ---- frames from the server --------------------------------------------------------------

// Frames of a game stream are taken in order, each once; a new owner's snapshot always
// (protocol.js). What the protocol says to send (a resume after a gap, inputs again) goes.
function onFrame(f) {
  const r = page.frame(f, Date.now());
  sendAll(r.sends);
  inputsAnswered(r.answered);
  if (!r.take) return;
  if (r.notice === "moved") toast("Your game moved to another server; it goes on.");
  if (["game", "strong", "gtt", "itt-chat"].includes(f.type)) studyJoined(); // study.js
  switch (f.type) {
    case "status": return onStatus(f);
    case "game": return onSnapshot(f);
    case "message": return onMessage(f);
    case "typing": return onTyping(f);
    case "phase": game.phase = f.phase; return renderPhase();
    case "reveal": game.reveal = f; game.phase = "ended"; return renderPhase();
    case "error": return toast(f.message);
    case "resumed": case "pong": case "ack": return;
    // Views sent whole (the protocol re-sends held inputs once one has come).
    case "strong": return onStrong(f); // Strong Turing Test (strong.js)
    case "gtt": return onGTT(f); // people in the GTT (gtt.js)
    case "itt-chat": return onITTChat(f); // ITT conversations (itt_chat.js)
  }
}

function onStatus(f) {
  studyStatus(f); // study.js: a join chosen before the session, the hand-off at the end
  if (f.modes && f.modes.length) renderModes(f.modes);
  if (f.rounds) renderProgress(f.rounds);
  if (f.state === "idle") { game = null; show("v-lobby"); }
  else if (f.state === "waiting") show("v-waiting"); // no seconds counter: waits say nothing
  else if (f.state === "no-match") { $("nomatch").hidden = false; show("v-survey"); }
  else if (f.state === "rounds-done") { allDone(f.rounds); show("v-survey"); }
  else if (f.state === "survey-saved") show("v-thanks");
}

function allDone(rounds) {
  const { played, total } = rounds;
  // Fewer played than the study has: the rest were witness rounds excused (no interrogator
  // was free in time), which the page says rather than claiming all were played.
  $("alldone").textContent = played >= total
    ? `You have played all ${total} ${total === 1 ? "round" : "rounds"} — thank you!`
    : `Your part is done: you played ${played} of ${total} rounds, and the rest are excused because no interrogator was free for you in time. Thank you!`;
  $("alldone").hidden = false;
}

function renderProgress(r) {
  // Study rounds so far (practice games do not count).
  $("progress").hidden = r.played === 0;
  $("progress").textContent = `You have played ${r.played} of ${r.total} rounds.`;
}

function renderModes(modes) {
  const box = $("modes");
  box.replaceChildren();
  // A live integrative test server explains its own game (judge, human agent, A and B).
  const liveItt = modes.every((m) => m.name.startsWith("live-itt"));
  showLobbyHow(modes); // study.js: the instructions of the game this server plays
  for (const m of modes) {
    const b = el("button", "mode" + (m.practice ? " practice" : ""));
    b.type = "button";
    const title = el("strong", "", m.title);
    // The visible tag is decoration: the name says "practice" once, in words ("Practice",
    // not "PracticePRACTICE"), and the note under the title is the button's description.
    if (m.practice) { const tag = el("span", "tag", "practice"); tag.setAttribute("aria-hidden", "true"); title.append(tag); }
    const named = m.practice && !/practice/i.test(m.title) ? `${m.title} (practice)` : m.title;
    b.setAttribute("aria-label", named);
    const note = m.about || (liveItt
      ? (m.practice ? "You judge; a stand-in answers as the person. Not part of the study." : "With another person and an AI.")
      : (m.practice ? "AI witnesses only; not part of the study." : "With other people and AI witnesses."));
    const small = el("small", "", note);
    small.id = `mode-note-${m.name}`;
    b.setAttribute("aria-describedby", small.id);
    b.append(title, small);
    b.addEventListener("click", () => {
      if (!$("consent").checked) { toast("Please tick the consent box first."); $("consent").focus(); return; }
      joinMode(m.name); // study.js: starts the session first if there is none
    });
    box.append(b);
  }
}

function onSnapshot(f) {
  const fresh = !game || game.game !== f.game;
  game = f; // inputs it shows were answered, the rest sent again (protocol.js)
  clockSkew = f.now - Date.now() / 1000;
  show("v-game");
  buildChats();
  for (const m of f.messages) appendMessage(m);
  renderPhase();
  // A game has started: focus goes to its (first) message box, described by the hint.
  if (game.phase === "playing" && (fresh || focusLost())) focusOn(document.querySelector("[data-input]"));
}

function onMessage(m) {
  if (!game) return;
  game.messages.push(m);
  appendMessage(m);
  hideTyping(m.channel);
  updateComposers();
}

function onTyping(f) {
  const t = document.querySelector(`[data-typing="${f.channel}"]`);
  if (!t) return;
  // Named as the chat is: "Witness A" beside "Witness B", "The witness" when alone.
  const who = game.role === "interrogator" ? (game.channels.length > 1 ? `Witness ${f.channel}` : "The witness") : "The interrogator";
  t.textContent = `${who} is typing…`;
  clearTimeout(typingTimers[f.channel]);
  typingTimers[f.channel] = setTimeout(() => hideTyping(f.channel), TYPING_SHOW_MS);
}

function hideTyping(channel) {
  const t = document.querySelector(`[data-typing="${channel}"]`);
  if (t) t.textContent = "";
}

// ---- the game screen ---------------------------------------------------------------------

function chatTitle(alias) {
  if (game.role === "witness") return "Interrogator";
  return game.channels.length > 1 ? `Witness ${alias}` : "Witness";
}

// "End & decide" back to one click from ending (a game's first click never ends the next).
function disarmEnd() {
  clearTimeout(disarmEnd.timer);
  $("end").dataset.armed = "";
  $("end").textContent = "End & decide";
}

function buildChats() {
  disarmEnd();
  const box = $("chats");
  box.replaceChildren();
  $("role").textContent = game.role === "interrogator" ? "You are the interrogator" : "You are a witness";
  $("mode").replaceChildren(document.createTextNode(game.title));
  if (game.practice) $("mode").append(el("span", "tag", "practice · not study data"));
  $("round").hidden = !game.rounds;
  if (game.rounds) $("round").textContent = `Round ${game.rounds.played} of ${game.rounds.total}`;
  $("end").hidden = game.role !== "interrogator";
  $("hint").textContent = roleHint(game.role) || (game.role === "interrogator"
    ? (game.channels.length > 1
      ? "One witness is a person, the other an AI. Chat with both, then decide which is human."
      : "Is this witness a person or an AI? Chat, then decide.")
    : "Convince the interrogator that you are human. They write first.");
  for (const alias of game.channels) {
    const chat = el("section", "chat");
    chat.setAttribute("aria-label", chatTitle(alias));
    const head = el("header");
    head.append(el("span", "", chatTitle(alias)));
    const log = el("ol", "log");
    log.dataset.log = alias;
    log.setAttribute("aria-live", "polite");
    const typing = el("div", "typing");
    typing.dataset.typing = alias;
    typing.setAttribute("role", "status"); // "… is typing" is announced, politely
    const form = el("form", "composer");
    const input = el("textarea");
    input.rows = 1;
    input.dataset.input = alias;
    input.setAttribute("aria-label", `Message to ${chatTitle(alias)}`);
    input.setAttribute("aria-describedby", "hint");
    const counter = el("span", "counter", `0/${game.max_chars}`);
    const btn = el("button", "primary", "Send");
    btn.type = "submit";
    guardComposer(input, form);
    input.addEventListener("input", () => {
      if (input.readOnly) return;
      const n = input.value.length;
      counter.textContent = `${n}/${game.max_chars}`;
      counter.classList.toggle("over", n > game.max_chars);
      const now = Date.now();
      if (n && now - lastTypingSent > TYPING_SEND_MS) { lastTypingSent = now; send({ type: "typing", channel: alias }); }
    });
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      if (text.length > game.max_chars) { toast(`At most ${game.max_chars} characters.`); return; }
      sendInput({ type: "message", after: game.messages.length, channel: alias, text });
      input.value = "";
      input.focus();
      counter.textContent = `0/${game.max_chars}`;
      updateComposers();
    });
    const side = el("div");
    side.append(counter);
    form.append(input, btn);
    head.append(side);
    chat.append(head, log, typing, form);
    box.append(chat);
  }
}

// A chat input: people type their messages (no pasting or dropping text in); Enter sends.
function guardComposer(input, form) {
  input.addEventListener("paste", (e) => { e.preventDefault(); toast("Pasting is switched off in this game."); });
  input.addEventListener("drop", (e) => e.preventDefault());
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); form.requestSubmit(); }
  });
}

function appendMessage(m) {
  const log = document.querySelector(`[data-log="${m.channel}"]`);
  if (!log) return;
  const li = el("li", `msg ${m.sender}`);
  // Screen readers announce the log (aria-live): each message says who wrote it.
  li.append(el("span", "sr-only", `${speakerName(m)}: `), document.createTextNode(m.text));
  const t = el("time", "", new Date(m.at * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
  t.dateTime = new Date(m.at * 1000).toISOString();
  li.append(t);
  log.append(li);
  log.scrollTop = log.scrollHeight;
}

function sending(alias) {
  return page.sending(alias);
}

function speakerName(m) {
  if (m.sender === "you") return "You";
  if (m.sender === "game") return "Game";
  return game.role === "witness" ? "Interrogator" : chatTitle(m.channel);
}

function mayWrite(alias) {
  if (game.phase !== "playing") return [false, "The conversation is over."];
  if (sending(alias)) return [false, connected() ? "Sending…" : "Reconnecting… (your message will be sent)"];
  const said = game.messages.filter((m) => m.channel === alias && m.sender !== "game");
  const last = said.length ? said[said.length - 1].sender : null;
  if (last === "you") return [false, "Wait for the reply…"];
  if (last === null && !game.speaks_first) return [false, "The interrogator writes first…"];
  return [true, "Type a message (Enter sends)"];
}

function updateComposers() {
  for (const alias of game.channels) {
    const input = document.querySelector(`[data-input="${alias}"]`);
    if (!input) continue;
    const [ok, why] = mayWrite(alias);
    // Read-only, not disabled: a disabled box drops keyboard focus, and a person who has just
    // sent should be able to type their next message without reaching for the mouse.
    input.readOnly = !ok;
    input.setAttribute("aria-disabled", String(!ok));
    input.placeholder = why;
    input.form.querySelector("button").disabled = !ok;
  }
}

function renderPhase() {
  updateComposers();
  if (game.phase !== "playing") for (const alias of game.channels) { clearTimeout(typingTimers[alias]); hideTyping(alias); }
  const judge = game.role === "interrogator";
  $("end").disabled = game.phase !== "playing";
  $("end").hidden = !judge || game.phase === "ended";
  $("verdict").hidden = !(judge && game.phase === "verdict");
  $("await-verdict").hidden = !(!judge && game.phase === "verdict");
  $("reveal").hidden = !game.reveal;
  if (judge && game.phase === "verdict") buildVerdictForm();
  if (game.reveal) renderReveal(game.reveal);
  const stage = `${game.game}:${game.reveal ? "reveal" : game.phase}`;
  if (stage !== renderPhase.stage) { renderPhase.stage = stage; landPhase(judge); }
  tick();
}

// A game's new stage is announced, and focus moves to it: the verdict form (or, for a
// witness, the wait for the verdict), then the reveal.
function landPhase(judge) {
  if (game.reveal) {
    announce(revealWords());
    focusOn($("reveal-title"));
    $("reveal").scrollIntoView({ behavior: "smooth", block: "start" });
  } else if (game.phase === "verdict" && judge) {
    announce(`The conversation is over. Your verdict: ${$("verdict-q").textContent}`);
    focusOn($("verdict-title"));
    $("verdict").scrollIntoView({ behavior: "smooth", block: "start" });
  } else if (game.phase === "verdict") {
    announce($("await-text").textContent);
    focusOn($("await-text"));
  }
}

function revealWords() {
  const sides = [...$("sides").children].map((c) => [...c.children].map((x) => x.textContent).join(": "));
  return ["Who was who.", ...sides.map((s) => `${s}.`), $("outcome").textContent, $("flagged").textContent]
    .filter(Boolean).join(" ");
}

function buildVerdictForm() {
  const box = $("choices");
  if (box.dataset.game === game.game) return;
  box.dataset.game = game.game;
  box.replaceChildren();
  $("reason").value = "";
  $("confidence").value = "50";
  $("conf-out").textContent = "50";
  $("verdict").querySelector("button").disabled = false;
  const which = game.judge_choices.includes("human") === false;
  $("verdict-q").textContent = which ? "Which witness is the human?" : "Was the witness a human or an AI?";
  for (const c of game.judge_choices) {
    const label = el("label", "choice");
    const input = el("input");
    input.type = "radio"; input.name = "choice"; input.value = c; input.required = true;
    label.append(input, document.createTextNode(which ? `Witness ${c} is human` : (c === "human" ? "Human" : "AI")));
    box.append(label);
  }
}

function renderReveal(r) {
  const sides = $("sides");
  sides.replaceChildren();
  for (const s of r.sides) {
    const card = el("div", `side ${s.kind}`);
    const who = r.you === s.channel ? " (you)" : "";
    card.append(el("span", "muted", (r.sides.length > 1 ? `Witness ${s.channel}` : "The witness") + who));
    card.append(el("strong", "", s.kind === "human" ? "A person" : `An AI: ${s.name}`));
    sides.append(card);
  }
  // After the last round the only way on is the exit survey.
  const last = game.rounds && game.rounds.played >= game.rounds.total;
  $("again").hidden = Boolean(last);
  $("to-survey").className = last ? "primary" : "ghost";
  if (last) allDone(game.rounds);
  $("flagged").hidden = !r.flagged;
  $("flagged").textContent = r.flagged || "";
  let outcome = "";
  if (r.correct !== null && r.correct !== undefined) {
    if (game.role === "interrogator") outcome = r.correct ? "You were right." : "You were fooled.";
    else outcome = r.correct ? "The interrogator picked the person correctly." : "The interrogator got it wrong.";
    if (r.confidence !== null && r.confidence !== undefined) outcome += ` (confidence ${r.confidence}/100)`;
  }
  $("outcome").textContent = outcome;
}

function tick() {
  if (!game || $("v-game").hidden) return;
  const box = $("countdown");
  if (!game.deadline || game.phase !== "playing") { box.textContent = game.phase === "playing" ? "—" : "0:00"; return; }
  const left = Math.max(0, game.deadline - (Date.now() / 1000 + clockSkew));
  const m = Math.floor(left / 60), s = Math.floor(left % 60);
  box.textContent = `${m}:${String(s).padStart(2, "0")}`;
  box.parentElement.classList.toggle("low", left < 30);
}

// ---- wiring ------------------------------------------------------------------------------

onAnswered.push(() => { if (game) updateComposers(); });

document.addEventListener("DOMContentLoaded", () => {
  $("conf-out").textContent = $("confidence").value;
  $("confidence").addEventListener("input", () => { $("conf-out").textContent = $("confidence").value; });
  $("end").addEventListener("click", () => {
    // Two clicks, not a dialog: ending is final, and dialogs trap keyboard and screen readers.
    if ($("end").dataset.armed === "1") { disarmEnd(); sendInput({ type: "end" }); return; }
    $("end").dataset.armed = "1";
    $("end").textContent = "Click again to end";
    clearTimeout(disarmEnd.timer);
    disarmEnd.timer = setTimeout(disarmEnd, 4000);
  });
  $("cancel-wait").addEventListener("click", () => send({ type: "leave" }));
  $("again").addEventListener("click", () => send({ type: "leave" }));
  $("to-survey").addEventListener("click", () => show("v-survey"));
  $("verdict").addEventListener("submit", (e) => {
    e.preventDefault();
    const choice = document.querySelector('input[name="choice"]:checked');
    if (!choice) { toast("Choose an answer first."); return; }
    sendInput({ type: "verdict", choice: choice.value, confidence: Number($("confidence").value), reason: $("reason").value.trim() });
    $("verdict").querySelector("button").disabled = true;
  });
  $("survey").addEventListener("submit", (e) => {
    e.preventDefault();
    const answers = {};
    for (const [k, v] of new FormData(e.target).entries()) answers[k] = String(v).slice(0, 1000) || null;
    send({ type: "survey", answers });
  });
  setInterval(tick, 250);
  setInterval(heartbeat, PROTOCOL.PING_MS);
  startStudyPage(); // study.js: connects once the person has a session
});

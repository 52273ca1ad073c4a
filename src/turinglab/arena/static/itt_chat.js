// People in ITT topic conversations (arena/modes/itt_chat_mode.py). The server sends one "itt-chat"
// frame with the viewer's whole state whenever it changes; this file renders the last one
// (every text through textContent, never HTML) and sends what the person types (through
// inputs.js's sendInput: applied once, re-sent after a reconnect). Uses
// arena.js's $, el, send, show, toast and VIEWS; builds its own view so the page's markup
// stays as it is.
"use strict";

let ittChat = null; // the last state frame
let ittTypingTimer = null;

const ITT_CHAT_MODE = "itt-conversation";
const ITT_CHAT_HOW = [
  "You are paired with a partner — another person or an AI — and given a topic.",
  "Take turns: one message each, the person marked A writes first.",
  "The chat ends after a fixed number of messages; stay on the topic, write as you would to a friend.",
  "Messages are at most 300 characters; pasting is switched off.",
  "Afterwards you learn who your partner was. Your messages may be shown to other people, who will guess whether they were written by a person or a machine.",
];

// The lobby explains this game when it is the only one offered (arena.js explains the
// interrogation games); wraps arena.js's renderModes rather than editing it.
const renderModesForChat = renderModes;
renderModes = function (modes) {
  renderModesForChat(modes);
  const only = modes.length > 0 && modes.every((m) => m.name === ITT_CHAT_MODE);
  let how = $("how-itt-chat");
  if (!how && only) {
    how = el("div");
    how.id = "how-itt-chat";
    how.append(el("p", "lead", "Chat about a topic with a partner. Some partners are people, some are AI."));
    const details = el("details");
    details.open = true;
    details.append(el("summary", "", "How it works"));
    const list = el("ul");
    for (const line of ITT_CHAT_HOW) list.append(el("li", "", line));
    details.append(list);
    how.append(details);
    $("how-chat").after(how);
  }
  if (how) how.hidden = !only;
  if (only) $("how-chat").hidden = true;
};

function ittChatView() {
  let view = $("v-itt-chat");
  if (view) return view;
  view = el("section");
  view.id = "v-itt-chat";
  view.hidden = true;
  const bar = el("div", "gamebar");
  const who = el("div");
  const role = el("span", "pill");
  role.id = "c-role";
  const mode = el("span", "muted");
  mode.id = "c-mode";
  const round = el("span", "round");
  round.id = "c-round";
  round.hidden = true;
  who.append(role, document.createTextNode(" "), mode, document.createTextNode(" "), round);
  const count = el("div", "muted c-count");
  count.id = "c-count";
  bar.append(who, count);
  const hint = el("p", "hint");
  hint.id = "c-hint";
  hint.setAttribute("aria-live", "polite");

  const chat = el("section", "chat c-chat");
  chat.setAttribute("aria-label", "Conversation with your partner");
  const head = el("header");
  const topic = el("span");
  topic.id = "c-topic";
  const counter = el("span", "counter");
  counter.id = "c-counter";
  head.append(topic, counter);
  const log = el("ol", "log");
  log.id = "c-log";
  log.setAttribute("aria-live", "polite");
  const typing = el("div", "typing");
  typing.id = "c-typing";
  typing.setAttribute("role", "status"); // "Your partner is typing…" is announced, politely
  const form = el("form", "composer");
  form.id = "c-compose";
  const input = el("textarea");
  input.id = "c-text";
  input.rows = 1;
  input.setAttribute("aria-label", "Your message");
  input.setAttribute("aria-describedby", "c-hint");
  const button = el("button", "primary", "Send");
  button.type = "submit";
  form.append(input, button);
  guardComposer(input, form);
  input.addEventListener("input", () => {
    if (input.readOnly || !ittChat) return;
    countChat();
    const now = Date.now();
    if (input.value && now - lastTypingSent > TYPING_SEND_MS) { lastTypingSent = now; send({ type: "typing", channel: "A" }); }
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const text = input.value.trim();
    if (!text || !ittChat || ittChat.phase !== "writing") return;
    if (text.length > ittChat.max_chars) { toast(`At most ${ittChat.max_chars} characters.`); return; }
    sendInput({ type: "message", channel: "A", text });
    input.value = "";
    countChat();
  });
  chat.append(head, log, typing, form);

  const end = el("div", "card reveal");
  end.id = "c-end";
  end.hidden = true;
  end.setAttribute("role", "region");
  end.setAttribute("aria-labelledby", "c-end-title");
  const title = el("h2", "", "The conversation is over");
  title.id = "c-end-title";
  end.append(title);
  const flagged = el("p", "warn");
  flagged.id = "c-flagged";
  flagged.hidden = true;
  const outcome = el("p", "outcome");
  outcome.id = "c-outcome";
  const next = el("p", "muted");
  next.id = "c-next";
  next.hidden = true;
  const actions = el("div", "actions");
  const again = el("button", "primary", "Chat again");
  again.id = "c-again";
  again.type = "button";
  again.addEventListener("click", () => send({ type: "leave" }));
  const survey = el("button", "ghost", "Finish & exit survey");
  survey.id = "c-survey";
  survey.type = "button";
  survey.addEventListener("click", () => show("v-survey"));
  actions.append(again, survey);
  end.append(flagged, outcome, next, actions);

  view.append(bar, hint, chat, end);
  $("v-survey").before(view);
  VIEWS.push("v-itt-chat"); // arena.js's show() hides it with the other views
  return view;
}

// Built before the socket's first frame can arrive (arena.js connects on the same event).
document.addEventListener("DOMContentLoaded", ittChatView);

function countChat() {
  const n = $("c-text").value.length;
  $("c-counter").textContent = `${n}/${ittChat.max_chars}`;
  $("c-counter").classList.toggle("over", n > ittChat.max_chars);
}

function onITTChat(f) {
  const fresh = !ittChat || ittChat.game !== f.game;
  ittChat = f;
  ittChatView();
  show("v-itt-chat");
  if (fresh) $("c-text").value = "";
  renderITTChat();
  // A new conversation: focus goes to its message box (described by the hint).
  if (ittChat.phase !== "ended" && (fresh || focusLost())) focusOn($("c-text"));
}

function onITTChatTyping() {
  $("c-typing").textContent = "Your partner is typing…";
  clearTimeout(ittTypingTimer);
  ittTypingTimer = setTimeout(() => { $("c-typing").textContent = ""; }, TYPING_SHOW_MS);
}

function renderITTChat() {
  const s = ittChat;
  const said = s.lines.filter((m) => m.sender !== "game").length;
  $("c-role").textContent = `You are ${s.you}`;
  $("c-round").hidden = !s.rounds; // study conversations are rounds (practice never counts)
  if (s.rounds) $("c-round").textContent = `Round ${s.rounds.played} of ${s.rounds.total}`;
  $("c-mode").textContent = s.title + (s.practice ? " · practice" : "");
  $("c-count").textContent = `Message ${Math.min(said + 1, s.exchanges)} of ${s.exchanges}`;
  $("c-topic").textContent = `Topic: ${s.topic}`;
  const hints = {
    writing: said ? "Your turn: reply to your partner." : "You write first: greet your partner and bring up the topic.",
    waiting: said ? "Waiting for your partner's message…" : "Your partner writes first…",
    ended: "The conversation has ended.",
  };
  $("c-hint").textContent = hints[s.phase] || "";
  const log = $("c-log");
  log.replaceChildren(...s.lines.map((m) => {
    const li = el("li", `msg ${m.sender}`);
    const name = m.sender === "you" ? "You" : m.sender === "game" ? "Instructions" : "Partner";
    li.append(el("span", "sr-only", `${name}: `), document.createTextNode(m.text));
    return li;
  }));
  log.scrollTop = log.scrollHeight;
  const input = $("c-text");
  const writing = s.phase === "writing";
  input.readOnly = !writing;
  input.setAttribute("aria-disabled", String(!writing));
  input.placeholder = writing ? "Type a message (Enter sends)" : (s.phase === "ended" ? "The conversation is over." : "Wait for your partner…");
  input.maxLength = s.max_chars;
  $("c-compose").querySelector("button").disabled = !writing;
  $("c-compose").hidden = s.phase === "ended";
  if (s.phase !== "waiting") $("c-typing").textContent = "";
  countChat();
  const ended = s.phase === "ended";
  $("c-end").hidden = !ended;
  $("c-flagged").hidden = !s.flagged;
  $("c-flagged").textContent = s.flagged || "";
  $("c-outcome").textContent = ended && s.partner ? `Your partner was ${s.partner}.` : "";
  renderChatNext(s, ended);
  if (ended && $("c-end").dataset.shown !== s.game) {
    $("c-end").dataset.shown = s.game; // announced and focused once per conversation
    announce(["The conversation is over.", $("c-outcome").textContent, s.flagged || ""].filter(Boolean).join(" "));
    focusOn($("c-end-title"));
  }
  if (ended) $("c-end").scrollIntoView({ behavior: "smooth", block: "nearest" });
}

// The end card's way on. After the last round only the exit survey is left: "Chat again"
// would only bring the server's "rounds done" back. A flagged or abandoned conversation gave
// its round back (abandon.py), so `played`, counted when it began, is one too many then and
// another round follows.
function renderChatNext(s, ended) {
  const counted = ended && s.rounds && !s.flagged;
  const last = counted && s.rounds.played >= s.rounds.total;
  $("c-again").hidden = Boolean(last);
  $("c-again").textContent = s.rounds ? "Next round" : "Chat again";
  $("c-survey").className = last ? "primary" : "ghost";
  $("c-next").hidden = !counted;
  if (counted) {
    const { played, total } = s.rounds;
    $("c-next").textContent = last
      ? `That was your last round (${played} of ${total}). A few questions, and you are done.`
      : `Round ${played} of ${total} done. Start the next one, or finish here.`;
  }
  if (last) allDone(s.rounds); // the survey then says all rounds were played
}

// A partner's typing arrives as arena.js's "typing" frame; its handler knows only its own chats.
const onTypingForChat = onTyping;
onTyping = function (f) {
  if (ittChat && !$("v-itt-chat").hidden) onITTChatTyping();
  else onTypingForChat(f);
};

// Keep the newest message in sight when the window changes size (a phone turned, a keyboard).
window.addEventListener("resize", () => {
  const log = $("c-log");
  if (log) log.scrollTop = log.scrollHeight;
});

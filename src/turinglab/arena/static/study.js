// The study around the games (arena.js plays them): consent before any session, the
// recruitment platform's ids from the URL, per-role instructions, and the hand-off at the end
// (the code the server says was earned, then the platform's URL).
"use strict";

const STUDY = JSON.parse(document.getElementById("study-data").textContent);
const RECRUITMENT_PARAMS = ["PROLIFIC_PID", "STUDY_ID", "SESSION_ID", "pid"];
let pendingJoin = null; // a join chosen before the session existed: sent once connected
let sentJoin = null; // a join sent and not answered yet (no game, no status of its own)
let freshSocket = false; // the next status is the first on a new connection

// Called once the page has loaded: a person who has consented before (a session cookie) is
// connected at once; anyone else sees the consent form and the games, and no session exists
// until they agree.
function startStudyPage() {
  $("decline").addEventListener("click", screenedOut);
  if (STUDY.session) { connect(); return; }
  $("conn").textContent = "";
  renderModes(STUDY.modes);
  show("v-lobby");
}

function recruitmentIds() {
  const params = new URLSearchParams(location.search);
  const ids = {};
  for (const k of RECRUITMENT_PARAMS) if (params.get(k)) ids[k] = params.get(k).slice(0, 64);
  return ids;
}

// A mode was chosen (the consent box is ticked): join now, or first start the session.
async function joinMode(name) {
  const frame = { type: "join", mode: name, consent: true };
  if (STUDY.session) { sentJoin = frame; send(frame); return; }
  if (pendingJoin) return; // the session is being started
  pendingJoin = frame;
  let res;
  try {
    res = await fetch("/consent", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ consent: true, ids: recruitmentIds() }),
    });
  } catch (err) { res = null; }
  if (!res || !res.ok) { pendingJoin = null; toast("Could not start your session; please try again."); return; }
  STUDY.session = true;
  connect();
}

// A new connection (arena.js): its first status says where the server has this person.
function studySocketOpened() { freshSocket = true; }

// A game (or a view of one) has come: the join was answered.
function studyJoined() { sentJoin = null; }

// Every status frame: a join chosen before the session is sent now; a join lost with its
// connection (the server that was to answer died first) is sent again when the first status
// on the new connection shows the lobby; the ends are noted.
function studyStatus(f) {
  const first = freshSocket;
  freshSocket = false;
  if (pendingJoin && f.state === "idle") { sentJoin = pendingJoin; pendingJoin = null; send(sentJoin); }
  else if (sentJoin && first && f.state === "idle") send(sentJoin);
  else sentJoin = null; // answered (waiting, no-match, …) or the lobby on a live connection
  if (f.state === "survey-saved") handOff();
}

// The lobby's "how it works" for the kind of game this server plays: chat tests (the study's
// own text, when it gives one), the live integrative test, the Strong Turing Test or the GTT.
function showLobbyHow(modes) {
  const all = (prefix) => modes.length > 0 && modes.every((m) => m.name.startsWith(prefix));
  const kind = all("live-itt") ? "live-itt" : all("strong") ? "strong" : all("gtt-") ? "gtt" : "chat";
  for (const k of ["chat", "live-itt", "strong", "gtt"]) $(`how-${k}`).hidden = k !== kind;
}

function roleHint(role) {
  return (STUDY.instructions && STUDY.instructions[role]) || "";
}

// "I do not agree": before any session nothing was kept; after taking part the server marks
// the person's data withdrawn (left out of every export) and says so.
async function screenedOut() {
  show("v-thanks");
  $("thanks-title").textContent = "Thank you for your time";
  $("thanks-text").textContent = "";
  const to = await askHandOff(STUDY.session ? "/withdraw" : "/handoff");
  if (to && to.text) $("thanks-text").textContent = to.text;
  if (to) showHandOff(to);
}

// The survey is saved: the server says which end this person has reached (completion only
// for every study round played) and its code.
async function handOff() {
  const to = await askHandOff("/handoff");
  if (to) showHandOff(to);
}

async function askHandOff(path) {
  const init = path === "/withdraw"
    ? { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" }
    : {};
  try {
    const res = await fetch(path, init);
    if (res.ok) return await res.json();
  } catch (err) { /* shown below */ }
  toast("Could not reach the study server; please reload the page.");
  return null;
}

// Show the platform's code for this end and, when the study names a URL, open it after a
// pause long enough to note the code.
function showHandOff(to) {
  if (to.end === "early_exit" || to.end === "timed_out") {
    const done = to.rounds_done, total = to.rounds_total;
    $("thanks-text").textContent = to.end === "timed_out"
      ? `Nobody was free to play with you in time (${done} of ${total} rounds played).`
      : `You finished early, after ${done} of ${total} rounds.`;
  }
  if (!to.code && !to.url) return;
  $("handoff").hidden = false;
  $("handoff-code").textContent = to.code ? `Your code: ${to.code}` : "";
  const link = $("handoff-link");
  link.hidden = !to.url;
  if (!to.url) return;
  link.href = to.url;
  // The note counts down to the redirect, second by second, from the page's own clock.
  const leaving = Date.now() + Number(to.redirect_after_s || 0) * 1000;
  clearInterval(showHandOff.timer);
  const count = () => {
    const s = Math.max(0, Math.ceil((leaving - Date.now()) / 1000));
    $("handoff-note").textContent = `Taking you back in ${s} ${s === 1 ? "second" : "seconds"}…`;
    if (s > 0) return;
    clearInterval(showHandOff.timer);
    location.href = to.url;
  };
  showHandOff.timer = setInterval(count, 250);
  count();
}

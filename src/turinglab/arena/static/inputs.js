// Inputs the server must apply exactly once — a message, ending, a verdict, a preference — for
// every game view on the page (arena.js, strong.js, gtt.js, itt_chat.js). Each carries an id
// and is kept until the server answers it: an ack, an error naming it (`ref`), or the frame
// that shows it. While the connection is down it waits; it is sent again once the page is
// caught up after a reconnect (or a takeover), and when overdue. The server applies each id
// once (arena/live.py). Uses arena.js's ws and connected().
"use strict";

const RESEND_MS = 5000; // an input not answered by then is sent again
const unanswered = new Map(); // id -> {frame, sentAt}, oldest first
const onAnswered = []; // views to update when an input is answered
let resendWhenCaughtUp = false; // a socket opened since the last catch-up

function newId() {
  const bytes = new Uint8Array(9);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function sendInput(frame) {
  const item = { ...frame, id: newId() };
  unanswered.set(item.id, { frame: item, sentAt: Date.now() });
  if (connected()) ws.send(JSON.stringify(item));
  return item;
}

function answered(id) {
  if (!unanswered.delete(id)) return;
  for (const update of onAnswered) update();
}

function resendInputs(overdueOnly) {
  if (!connected()) return;
  const now = Date.now();
  for (const item of unanswered.values()) {
    if (overdueOnly && now - item.sentAt < RESEND_MS) continue;
    item.sentAt = now;
    ws.send(JSON.stringify(item.frame));
  }
}

// A new socket is open: what is unanswered goes again once the server has said where the page
// is (a `resumed` frame, or a whole state of a game view), so it is judged against that.
function inputsReconnected() {
  resendWhenCaughtUp = true;
}

function inputsCaughtUp() {
  if (!resendWhenCaughtUp) return;
  resendWhenCaughtUp = false;
  resendInputs(false);
}

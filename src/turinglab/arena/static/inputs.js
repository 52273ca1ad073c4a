// Inputs the server must apply exactly once — a message, ending, a verdict, a preference — for
// every game view on the page (arena.js, strong.js, gtt.js, itt_chat.js). Each carries an id
// and is kept until the server answers it (protocol.js decides when, and when it goes again:
// after a reconnect once the page is caught up, after a takeover's snapshot, when overdue).
// The server applies each id once (arena/core/live.py). Uses arena.js's ws and connected().
"use strict";

const page = new PageProtocol(); // the page's protocol state (protocol.js)
const onAnswered = []; // views to update when an input is answered

function newId() {
  const bytes = new Uint8Array(9);
  crypto.getRandomValues(bytes);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function sendAll(frames) {
  if (!connected()) return;
  for (const f of frames) ws.send(JSON.stringify(f));
}

function sendInput(frame) {
  const item = { ...frame, id: newId() };
  sendAll(page.input(item, Date.now(), connected()));
  return item;
}

function inputsAnswered(ids) {
  if (ids.length) for (const update of onAnswered) update();
}

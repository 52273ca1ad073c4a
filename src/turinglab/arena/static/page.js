// What the one-at-a-time study pages share (judge.js, respond.js): text-only DOM building,
// the three views (start, trial, done), the progress bar and the page's small JSON API.
// Every value from the server goes into the page as text, never as HTML.
"use strict";

const $ = (id) => document.getElementById(id);

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

function show(view) {
  for (const id of ["v-start", "v-trial", "v-done"]) $(id).hidden = id !== view;
}

// The view a state calls for, with the progress bar brought up to date: "v-start" before
// registration, "v-done" after the last answer, else "v-trial".
function showState(state) {
  if (!state.registered) { show("v-start"); return "v-start"; }
  $("progress").hidden = false;
  const done = state.answered, total = state.total;
  $("progress-fill").style.width = (100 * done / total) + "%";
  $("progress-text").textContent = state.trial ? `${done + 1} of ${total}` : `${total} of ${total}`;
  const view = state.trial ? "v-trial" : "v-done";
  show(view);
  return view;
}

function apiAt(prefix) {
  return async (path, body) => {
    const init = body === undefined ? {} : {
      method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body),
    };
    const res = await fetch(prefix + path, init);
    const data = await res.json();
    return {ok: res.ok, status: res.status, data};
  };
}

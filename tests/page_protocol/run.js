// Runs the page protocol's conformance vectors through static/protocol.js (the page's own
// file) under Node: `node run.js VECTORS_DIR` prints every step's result as JSON (the Python
// test compares it with arena/core/page_protocol.py's) and exits 1 if any expectation fails.
"use strict";

const assert = require("node:assert");
const fs = require("node:fs");
const path = require("node:path");
const { PageProtocol } = require("../../src/turinglab/arena/static/protocol.js");

function state(p) {
  return { at: p.at === null ? null : { ...p.at }, unanswered: [...p.unanswered.keys()] };
}

function step(p, s) {
  switch (s.do) {
    case "frame": {
      const r = p.frame(s.f, s.now);
      return { take: r.take, sends: r.sends, answered: r.answered, notice: r.notice };
    }
    case "input": return { sends: p.input(s.frame, s.now, s.open) };
    case "tick": return p.tick(s.now, s.socket);
    case "closed": return p.closed(s.code, s.rand);
    case "opened": p.opened(s.now); return null;
    case "connecting": p.connecting(s.now); return null;
    case "query": return p.query();
    case "sending": return p.sending(s.channel);
    default: throw new Error(`unknown step ${s.do}`);
  }
}

const dir = process.argv[2];
const traces = {};
let failed = 0;
for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".json")).sort()) {
  const vector = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"));
  const p = new PageProtocol();
  const trace = [];
  vector.steps.forEach((s, i) => {
    const got = JSON.parse(JSON.stringify(step(p, JSON.parse(JSON.stringify(s)))));
    const now = state(p);
    trace.push({ result: got, state: now });
    try {
      if ("expect" in s) {
        if (s.expect !== null && typeof s.expect === "object") {
          for (const k of Object.keys(s.expect)) assert.deepStrictEqual(got[k], s.expect[k], k);
        } else assert.deepStrictEqual(got, s.expect);
      }
      for (const k of Object.keys(s.state || {})) assert.deepStrictEqual(now[k], s.state[k], k);
    } catch (err) {
      failed += 1;
      console.error(`${vector.name} step ${i} (${s.do}): ${err.message}`);
    }
  });
  traces[vector.name] = trace;
}
process.stdout.write(JSON.stringify(traces));
process.exit(failed ? 1 : 0);

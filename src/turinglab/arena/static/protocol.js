// The arena page's side of the websocket protocol, without the DOM: which frames the page
// takes (in order, once, a new stream's snapshot always), where it stands in its game stream,
// the inputs it keeps until answered and sends again, heartbeats and reconnect delays. The
// page (arena.js, inputs.js) and Node (tests/page_protocol/run.js) load this same file; the
// Python clients of tests and benchmarks follow it through arena/core/page_protocol.py, and both
// pass the vectors in tests/fixtures/page_protocol/. Times are milliseconds, given by the
// caller; every call returns the frames to send, never sends them itself.
"use strict";

const PROTOCOL = {
  PING_MS: 5000, // a ping this often while open
  DEAD_MS: 15000, // a server silent this long (not even a pong) is taken for gone
  // A handshake unanswered this long is given up and tried again (a stopped process accepts
  // the connection and never answers): with the backoff, a page whose socket dropped as its
  // process stopped is on another one inside the 15 s nobody should wait for a frame.
  OPEN_MS: 8000,
  LATE_MS: 7000, // a server silent this long while an input is held: the page says so
  RESEND_MS: 5000, // an input unanswered this long is sent again
  ASK_MS: 3000, // a gap (or a frame of another stream) asks for the rest at most this often
  MAX_BACKOFF_MS: 5000, // reconnect delays grow to this, well inside a game's 12 s grace
  MAX_RETRY: 8,
  SESSION_EXPIRED: 4401, // close code: the page reloads instead of reconnecting
};

// Views a page is sent whole (the STT, the GTT, the ITT chat): frames of the page's stream
// like the chat games' messages; one marked `snapshot` stands for the whole stream so far, as
// a "game" frame does (a new stream's always taken: a takeover's new owner).
const WHOLE_VIEWS = ["strong", "gtt", "itt-chat"];

function isSnapshot(f) {
  return f.type === "game" || (WHOLE_VIEWS.includes(f.type) && f.snapshot === true);
}

class PageProtocol {
  constructor() {
    this.at = null; // where the page is in its game stream: {game, stream, seq}
    this.unanswered = new Map(); // input id -> {frame, sentAt}, oldest first
    this.resendWhenCaughtUp = false; // a socket opened since the last catch-up
    this.askedAt = null; // when a resume was last asked for after a gap
    this.lastHeard = 0;
    this.toldLate = false; // said the server is silent, since it was last heard
    this.retry = 0;
  }

  // ---- the socket ----------------------------------------------------------------------

  // Where a (re)connecting socket resumes from (its /ws query), or null.
  query() {
    return this.at ? { game: this.at.game, stream: this.at.stream, seq: this.at.seq } : null;
  }

  connecting(now) {
    this.lastHeard = now; // a socket that does not open within OPEN_MS is given up
  }

  opened(now) {
    this.retry = 0;
    this.lastHeard = now;
    this.resendWhenCaughtUp = true; // unanswered inputs go once the server says where we are
  }

  // The socket closed: {reload: true}, or {delay_ms} before the next try. `rand` in [0, 1).
  closed(code, rand) {
    if (code === PROTOCOL.SESSION_EXPIRED) return { reload: true };
    this.retry = Math.min(this.retry + 1, PROTOCOL.MAX_RETRY);
    const delay = 250 * 2 ** this.retry * (0.5 + rand);
    return { delay_ms: Math.min(PROTOCOL.MAX_BACKOFF_MS, delay) };
  }

  // Every PING_MS. `socket`: "open", "connecting" or "closed". {dead, sends}: a dead socket
  // is closed by the caller and opened again.
  // `late`: an input is held and the server has said nothing at all (not even a pong) for
  // LATE_MS — a paused server; the page says so once, inside the 15 s nobody should wait
  // untold, before it gives the socket up.
  tick(now, socket) {
    const silent = now - this.lastHeard > PROTOCOL.DEAD_MS;
    if (socket === "connecting") return { dead: now - this.lastHeard > PROTOCOL.OPEN_MS, late: false, sends: [] };
    if (socket !== "open") return { dead: false, late: false, sends: [] };
    if (silent) return { dead: true, late: false, sends: [] };
    const late = !this.toldLate && this.unanswered.size > 0 && now - this.lastHeard > PROTOCOL.LATE_MS;
    if (late) this.toldLate = true;
    return { dead: false, late, sends: [{ type: "ping" }, ...this._resend(now, true)] };
  }

  // ---- inputs out ----------------------------------------------------------------------

  // An input the server applies once (a message, the end, a verdict, a preference): kept
  // until answered. `frame` carries its id. Returns what to send now.
  input(frame, now, open) {
    this.unanswered.set(frame.id, { frame, sentAt: now });
    return open ? [frame] : [];
  }

  // Whether a message to `channel` is still unanswered (the composer says "Sending…").
  sending(channel) {
    for (const item of this.unanswered.values()) {
      if (item.frame.type === "message" && item.frame.channel === channel) return true;
    }
    return false;
  }

  _resend(now, overdueOnly) {
    const out = [];
    for (const item of this.unanswered.values()) {
      if (overdueOnly && now - item.sentAt < PROTOCOL.RESEND_MS) continue;
      item.sentAt = now;
      out.push(item.frame);
    }
    return out;
  }

  _caughtUp(now) {
    if (!this.resendWhenCaughtUp) return [];
    this.resendWhenCaughtUp = false;
    return this._resend(now, false);
  }

  // ---- frames in -----------------------------------------------------------------------

  // A frame from the server: {take, sends, answered, notice}. `take`: the page shows it;
  // `answered`: input ids it answered; `notice`: "moved" when a snapshot starts a new stream
  // of the game the page was in (a takeover: the page says its game goes on elsewhere).
  frame(f, now) {
    this.lastHeard = now;
    this.toldLate = false;
    const answered = [];
    const answer = (id) => { if (this.unanswered.delete(id)) answered.push(id); };
    if (f.ref) answer(f.ref); // an answer counts even on a frame dropped as already seen
    const order = this._order(f, now);
    const out = { take: order.take, sends: order.sends, answered, notice: null };
    if (!order.take) return out;
    // Ending and the verdict are answered by the game moving on.
    if (f.type === "phase" || f.type === "reveal" || f.type === "status") {
      for (const [id, item] of [...this.unanswered]) {
        const kind = item.frame.type;
        if (kind === "end" || (kind === "verdict" && f.type !== "phase") || f.type === "status") answer(id);
      }
    }
    if (f.type === "status") this.at = null;
    else if (isSnapshot(f)) out.notice = this._snapshot(f, now, out, answer);
    else if (f.type === "resumed") {
      this.at = { game: f.game, stream: f.stream, seq: f.seq };
      this.askedAt = null;
      out.sends.push(...this._caughtUp(now));
    }
    return out;
  }

  // {take, sends}: frames of a stream are taken in `seq` order, each once; a gap, or a frame
  // of a stream the page has no snapshot of, asks for the rest (at most every ASK_MS).
  _order(f, now) {
    const at = this.at;
    if (f.seq === undefined || f.seq === null || !at) return { take: true, sends: [] };
    if (f.type === "resumed") return { take: true, sends: [] }; // where the stream stands
    if (isSnapshot(f)) {
      // A snapshot replaces what the page has: always taken from a new stream (a takeover's
      // new owner, a new game); in the same stream unless older than what the page has (the
      // snapshot after saving resumed has the seq of the notice just before it).
      const fresh = f.game !== at.game || f.stream !== at.stream || f.seq >= at.seq;
      return { take: fresh, sends: [] };
    }
    if (f.stream !== undefined && f.stream !== at.stream) return { take: false, sends: this._ask(now) };
    if (f.seq <= at.seq) return { take: false, sends: [] };
    if (f.seq > at.seq + 1) return { take: false, sends: this._ask(now) };
    at.seq = f.seq;
    return { take: true, sends: [] };
  }

  _ask(now) {
    if (this.askedAt !== null && now - this.askedAt <= PROTOCOL.ASK_MS) return [];
    this.askedAt = now;
    return [{ type: "resume", ...this.query() }];
  }

  _snapshot(f, now, out, answer) {
    const before = this.at;
    if (f.stream) this.at = { game: f.game, stream: f.stream, seq: f.seq };
    this.askedAt = null;
    // A message the snapshot shows (said before a takeover, say) is answered. A whole state
    // shows no message by its input: what it holds goes again (applied once, acked).
    for (const [id, item] of [...this.unanswered]) {
      const m = item.frame;
      if (m.type !== "message" || f.type !== "game") continue;
      if (f.messages.some((s) => s.sender === "you" && s.channel === m.channel && s.n >= m.after)) answer(id);
    }
    // What it does not show goes again now (applied once): it may have gone to a process
    // that died, and this snapshot comes from the one that took the game over.
    this.resendWhenCaughtUp = false;
    out.sends.push(...this._resend(now, false));
    const moved = before !== null && before.game === f.game && f.stream && before.stream !== f.stream;
    return moved ? "moved" : null;
  }
}

if (typeof module === "object" && module.exports) module.exports = { PageProtocol, PROTOCOL };

// The table websocket with silent reconnects: exponential backoff with jitter (or, after the
// server's `bye`, the wait it names in `reconnect_after_ms`), then {"type":"hello","last_version":n}
// so the server sends only what was missed. The state is 'open' only once that hello's `welcome`
// has come: until then the page's controls show the table as it was, and stay off. Commands not
// yet answered survive a closed socket: the next connection sends them again with the same ids (the
// server applies an id once and answers it once). A command refused with `rate_limited` is sent
// again after the wait the server names.

const PING_EVERY_MS = 15000;
const SILENCE_LIMIT_MS = 40000;

export class TableSocket {
  constructor(code, { onMessage, onState }) {
    this.code = code;
    this.onMessage = onMessage;
    this.onState = onState;
    this.ws = null;
    this.state = 'connecting';
    this.lastVersion = -1;
    this.attempt = 0;
    this.counter = 0;
    this.stopped = false;
    this.retryTimer = null;
    this.pingTimer = null;
    this.lastSeen = Date.now();
    this.prefix = Math.random().toString(36).slice(2, 8);
    this.unanswered = new Map(); // command id -> message, until its ack or error (across reconnects)
    this.reconnectAfterMs = null; // named by the server's bye: when to come back
  }

  url() {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    return `${scheme}://${location.host}/ws/tables/${encodeURIComponent(this.code)}`;
  }

  setState(state) {
    if (this.state === state) return;
    this.state = state;
    this.onState(state);
  }

  start() {
    this.stopped = false;
    this.open();
  }

  open() {
    clearTimeout(this.retryTimer);
    let ws;
    try {
      ws = new WebSocket(this.url());
    } catch {
      this.scheduleRetry();
      return;
    }
    this.ws = ws;
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.lastSeen = Date.now();
      const hello = { type: 'hello' };
      if (this.lastVersion >= 0) hello.last_version = this.lastVersion;
      ws.send(JSON.stringify(hello));
      // What the last connection left unanswered, same ids: applied once, answered here.
      for (const message of this.unanswered.values()) ws.send(JSON.stringify(message));
      this.startPings();
    };
    ws.onmessage = (event) => {
      if (this.ws !== ws) return;
      this.lastSeen = Date.now();
      let message;
      try {
        message = JSON.parse(event.data);
      } catch {
        return;
      }
      if (message.type === 'error' && message.code === 'rate_limited' && this.unanswered.has(message.id)) {
        const again = this.unanswered.get(message.id);
        setTimeout(() => {
          if (this.ws === ws) this.send(again); // else the next connection sends it
        }, message.retry_after_ms || 100);
        return; // not the player's mistake: no toast
      }
      if ((message.type === 'ack' || message.type === 'error') && message.id) this.unanswered.delete(message.id);
      if ((message.type === 'welcome' || message.type === 'update') && typeof message.version === 'number') {
        if (message.version < this.lastVersion && message.type === 'update') return; // stale
        this.lastVersion = Math.max(this.lastVersion, message.version);
      }
      if (message.type === 'bye' && typeof message.reconnect_after_ms === 'number') this.reconnectAfterMs = message.reconnect_after_ms;
      this.onMessage(message);
      if (message.type === 'welcome') this.setState('open'); // after the page has the fresh table
    };
    ws.onclose = (event) => {
      if (this.ws !== ws) return;
      this.stopPings();
      if (this.stopped) return;
      if (event.code === 4004 || event.code === 4010) {
        this.setState('gone');
        return;
      }
      if (event.code === 4001) {
        this.setState('signed_out'); // the session was signed out: reconnecting would not help
        return;
      }
      this.setState('reconnecting');
      if (this.reconnectAfterMs !== null) {
        // The server is restarting and said when to come back (spread over its clients).
        const delay = this.reconnectAfterMs;
        this.reconnectAfterMs = null;
        clearTimeout(this.retryTimer);
        this.retryTimer = setTimeout(() => {
          if (!this.stopped) this.open();
        }, delay);
        return;
      }
      this.scheduleRetry();
    };
    ws.onerror = () => {
      /* a close event follows */
    };
  }

  scheduleRetry() {
    const base = Math.min(8000, 250 * 2 ** this.attempt);
    const delay = base * (0.75 + Math.random() * 0.5);
    this.attempt += 1;
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => {
      if (!this.stopped) this.open();
    }, delay);
  }

  startPings() {
    this.stopPings();
    this.pingTimer = setInterval(() => {
      if (Date.now() - this.lastSeen > SILENCE_LIMIT_MS && this.ws) {
        this.ws.close(); // half-open connection: reconnect
        return;
      }
      this.send({ type: 'ping', id: 'p' });
    }, PING_EVERY_MS);
  }

  stopPings() {
    clearInterval(this.pingTimer);
  }

  send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) {
      this.ws.send(JSON.stringify(message));
      return true;
    }
    return false;
  }

  /** Whether command `id` is still waiting for its answer (it is sent again after a reconnect). */
  pending(id) {
    return this.unanswered.has(id);
  }

  /** A play command; returns its id, or null when the socket is not open. */
  command(type, fields = {}) {
    this.counter += 1;
    const id = `${this.prefix}-${this.counter}`;
    const message = { type, id, ...fields };
    if (this.lastVersion >= 0) message.version = this.lastVersion;
    if (!this.send(message)) return null;
    this.unanswered.set(id, message);
    if (this.unanswered.size > 64) this.unanswered.delete(this.unanswered.keys().next().value);
    return id;
  }

  /** Open a fresh connection now (after signing in, so the new cookie is used). */
  reconnectNow() {
    const old = this.ws;
    this.ws = null;
    if (old) old.close(1000);
    this.attempt = 0;
    this.open();
  }

  stop() {
    this.stopped = true;
    clearTimeout(this.retryTimer);
    this.stopPings();
    if (this.ws) this.ws.close(1000);
    this.ws = null;
  }
}

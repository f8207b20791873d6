// The lock-event stream (GET /v1/events) read with fetch() rather than EventSource, so that the
// token goes in the Authorization header (EventSource cannot set headers, and a token in the
// URL would end up in logs). Parses Server-Sent Events, reconnects with Last-Event-ID, and
// tells its owner about events, resets and its own state.
export class EventStream {
  // onEvent(name, data, id), onReset(), onState("connecting"|"live"|"reconnecting"|"failed",
  // detail), onUnauthorized(): the server refused the token.
  constructor({ url = "/v1/events", token = () => null, onEvent, onReset, onState, onUnauthorized }) {
    this.url = url;
    this.token = token;
    this.onEvent = onEvent;
    this.onReset = onReset;
    this.onState = onState;
    this.onUnauthorized = onUnauthorized;
    this.lastId = null;
    this.retryMs = 2000;
    this.failures = 0;
    this.controller = null;
    this.stopped = true;
  }

  start() {
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    this.controller?.abort();
  }

  async connect() {
    if (this.stopped) return;
    this.onState(this.failures === 0 ? "connecting" : "reconnecting");
    this.controller = new AbortController();
    const headers = { Accept: "text/event-stream" };
    const token = this.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (this.lastId !== null) headers["Last-Event-ID"] = String(this.lastId);
    let opened = false;
    try {
      const res = await fetch(this.url, { headers, cache: "no-store", signal: this.controller.signal });
      if (res.status === 401) {
        this.stopped = true;
        this.onUnauthorized();
        return;
      }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      opened = true;
      this.failures = 0;
      this.onState("live");
      await this.read(res.body);
    } catch (e) {
      if (this.stopped) return;
      if (!opened) this.failures += 1;
    }
    if (this.stopped) return;
    // The server went away (a restart, a network drop): come back, first soon, then less often.
    const delay = Math.min(this.retryMs * Math.max(1, this.failures), 15000);
    this.onState(this.failures > 3 ? "failed" : "reconnecting", delay);
    setTimeout(() => this.connect(), delay);
  }

  async read(body) {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    let event = { id: null, name: "message", data: [] };
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let nl;
      while ((nl = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, nl);
        buffer = buffer.slice(nl + (buffer.startsWith("\r\n", nl) ? 2 : 1));
        if (line === "") {
          if (event.data.length > 0 || event.name === "reset") this.dispatch(event);
          event = { id: null, name: "message", data: [] };
          continue;
        }
        if (line.startsWith(":")) continue;  // a comment: the server keeping the stream open
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let text = colon < 0 ? "" : line.slice(colon + 1);
        if (text.startsWith(" ")) text = text.slice(1);
        if (field === "id") event.id = text;
        else if (field === "event") event.name = text;
        else if (field === "data") event.data.push(text);
        else if (field === "retry" && /^\d+$/.test(text)) this.retryMs = Number(text);
      }
    }
  }

  dispatch(event) {
    const id = event.id !== null && /^\d+$/.test(event.id) ? Number(event.id) : null;
    if (event.name === "reset") {
      if (id !== null) this.lastId = id;
      this.onReset();
      return;
    }
    if (id !== null && this.lastId !== null && id <= this.lastId) {
      // Ids only grow on one server: a smaller one means another server answered. Start over.
      this.lastId = id;
      this.onReset();
      return;
    }
    if (id !== null) this.lastId = id;
    let data;
    try {
      data = JSON.parse(event.data.join("\n"));
    } catch {
      return;
    }
    this.onEvent(event.name, data, id);
  }
}

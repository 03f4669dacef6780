// One WebSocket per page that reconnects by itself and catches up on the jobs it follows:
// after a reconnect it re-subscribes to each job with the last seq it saw, and the server
// replays the rest from the job's stored record. Events already shown are dropped by seq.

export class StudioSocket {
  constructor(path = "/ws/studio/") {
    this.url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${path}`;
    this.handlers = new Set();
    this.lastSeq = new Map(); // job id -> highest seq seen
    this.queue = [];
    this.delay = 500;
    this.connect();
  }

  connect() {
    this.ws = new WebSocket(this.url);
    this.ws.addEventListener("open", () => {
      this.delay = 500;
      for (const [job, after] of this.lastSeq) this.raw({ action: "subscribe", job, after });
      for (const message of this.queue.splice(0)) this.raw(message);
      this.emit({ type: "socket.open" });
    });
    this.ws.addEventListener("message", (e) => {
      const event = JSON.parse(e.data);
      if (event.id && event.seq) {
        const seen = this.lastSeq.get(event.id) ?? 0;
        if (event.seq <= seen) return; // a replayed event we already showed
        this.lastSeq.set(event.id, event.seq);
      }
      this.emit(event);
    });
    this.ws.addEventListener("close", (e) => {
      this.emit({ type: "socket.closed", code: e.code });
      if (e.code === 4401) return; // signed out: do not hammer the server
      setTimeout(() => this.connect(), this.delay);
      this.delay = Math.min(this.delay * 2, 8000);
    });
  }

  // A job this page started: the server already sends its events; remember it for reconnects.
  follow(job) {
    if (!this.lastSeq.has(job)) this.lastSeq.set(job, 0);
  }

  // A job opened by id (a reload, another device): replay it from the record, then follow it.
  subscribe(job) {
    const known = this.lastSeq.has(job);
    this.follow(job);
    if (!known && this.ws.readyState === WebSocket.OPEN) {
      this.raw({ action: "subscribe", job, after: 0 });
    } // otherwise the "open" handler subscribes with the last seq seen
  }

  forget(job) {
    this.lastSeq.delete(job);
  }

  raw(message) {
    this.ws.send(JSON.stringify(message));
  }

  send(message) {
    if (this.ws.readyState === WebSocket.OPEN) this.raw(message);
    else this.queue.push(message);
  }

  on(handler) {
    this.handlers.add(handler);
    return () => this.handlers.delete(handler);
  }

  emit(event) {
    for (const handler of this.handlers) handler(event);
  }
}

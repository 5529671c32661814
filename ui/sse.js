// A text/event-stream parser. DuckLM's streams are POST requests, which EventSource
// cannot send, so the chat reads them with fetch and parses them here.
// Follows the WHATWG "interpreting an event stream" rules that matter to DuckLM: fields
// event/data/id, multi-line data, comments (": ping" heartbeats), any line ending.

export class SSEParser {
  /** @param {(message: {event: string, data: string, id: string|null}) => void} onMessage */
  constructor(onMessage) {
    this.onMessage = onMessage;
    this.buffer = "";
    this.reset();
  }

  reset() {
    this.eventName = "";
    this.dataLines = [];
    this.id = null;
  }

  /** Feed decoded text; complete messages are dispatched, partial lines kept. */
  feed(text) {
    this.buffer += text;
    // A lone "\r" at the end may be half of "\r\n": keep it until more text arrives.
    const lines = this.buffer.split(/\r\n|\r(?!$)|\n/);
    this.buffer = lines.pop();
    for (const line of lines) this.line(line);
  }

  /** The stream ended: a message without its blank line is incomplete and dropped. */
  end() {
    this.buffer = "";
    this.reset();
  }

  line(line) {
    if (line === "") {
      this.dispatch();
      return;
    }
    if (line.startsWith(":")) return; // a comment: the server's heartbeat
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") this.eventName = value;
    else if (field === "data") this.dataLines.push(value);
    else if (field === "id") this.id = value;
    // "retry" and unknown fields are ignored: reconnection is the chat's own decision.
  }

  dispatch() {
    if (this.dataLines.length > 0) {
      this.onMessage({
        event: this.eventName || "message",
        data: this.dataLines.join("\n"),
        id: this.id,
      });
    }
    this.reset();
  }
}

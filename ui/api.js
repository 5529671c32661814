// The DuckLM HTTP API (docs/api.md): JSON requests and SSE streams, with the bearer
// token the server put into the page's <meta name="ducklm-token">.

import { SSEParser } from "./sse.js";

const TOKEN_PLACEHOLDER = "__DUCKLM_TOKEN__";

/** An API answer with a 4xx/5xx status; `message` is the server's `detail`, for people. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

function token() {
  const meta = document.querySelector('meta[name="ducklm-token"]');
  const value = meta ? meta.content : "";
  if (!value || value === TOKEN_PLACEHOLDER) {
    throw new ApiError(0, "This page has no API token: open the chat from the DuckLM server.");
  }
  return value;
}

function headers(hasBody) {
  const result = { Authorization: `Bearer ${token()}` };
  if (hasBody) result["Content-Type"] = "application/json";
  return result;
}

/** The person-readable reason of a failed response (`detail`, or validation messages). */
async function errorFrom(response) {
  let detail = "";
  try {
    const body = await response.json();
    if (typeof body.detail === "string") detail = body.detail;
    else if (Array.isArray(body.detail)) detail = body.detail.map((e) => e.msg).join("; ");
    if (Array.isArray(body.errors) && body.errors.length > 0) {
      detail += ` (${body.errors.map((e) => e.msg).join("; ")})`;
    }
  } catch {
    // Not JSON (a proxy's error page, say): the status line is all there is.
  }
  return new ApiError(response.status, detail || `${response.status} ${response.statusText}`);
}

async function send(method, path, body, signal) {
  let response;
  try {
    response = await fetch(path, {
      method,
      headers: headers(body !== undefined),
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "Cannot reach the DuckLM server.");
  }
  if (!response.ok) throw await errorFrom(response);
  return response;
}

/**
 * A JSON request.
 *
 * @returns {Promise<any>} The parsed body, or null for 204.
 */
export async function request(method, path, body) {
  const response = await send(method, path, body);
  if (response.status === 204) return null;
  return response.json();
}

export const get = (path) => request("GET", path);
export const post = (path, body) => request("POST", path, body);
export const patch = (path, body) => request("PATCH", path, body);
export const del = (path) => request("DELETE", path);

/** A path with its query string; empty values are left out. */
export function withQuery(path, params) {
  const query = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") query.set(key, String(value));
  }
  const text = query.toString();
  return text ? `${path}?${text}` : path;
}

/**
 * Open an SSE stream and hand each DuckLM event to `onEvent` until the server closes it.
 *
 * @param {string} method - "POST" (chat, continue, password) or "GET" (attach to a task).
 * @param {string} path
 * @param {object|undefined} body - JSON body for POST.
 * @param {{onEvent: (event: object, id: string|null) => void, onOpen?: () => void,
 *   signal?: AbortSignal}} options - `onOpen` runs once the server has accepted the
 *   request, before any event.
 * @returns {Promise<void>} Resolves when the stream ends; rejects with ApiError when the
 *   request is refused or the connection breaks, with AbortError when aborted.
 */
export async function stream(method, path, body, { onEvent, onOpen, signal }) {
  const response = await send(method, path, body, signal);
  onOpen?.();
  const parser = new SSEParser(({ event, data, id }) => {
    let parsed;
    try {
      parsed = JSON.parse(data);
    } catch {
      return; // not one of DuckLM's events: nothing to show
    }
    if (parsed && typeof parsed === "object") {
      parsed.type ??= event;
      onEvent(parsed, id);
    }
  });
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "The connection to the DuckLM server broke.");
  } finally {
    parser.end();
    reader.releaseLock();
  }
}

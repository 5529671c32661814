// The DuckLM HTTP API (docs/api.md): JSON requests and SSE streams. The page holds no
// token: the browser's session cookie (HttpOnly, set by /login) goes with each request,
// and state-changing ones add the session's CSRF value, which /session hands only to a
// page of this origin.

import { SSEParser } from "./sse.js";

const CSRF_HEADER = "X-DuckLM-CSRF";
const SAFE_METHODS = new Set(["GET", "HEAD"]);
const LOGGED_OUT =
  "This browser is no longer logged in to DuckLM: run `ducklm open` in a terminal to log in again.";

/** An API answer with a 4xx/5xx status; `message` is the server's `detail`, for people. */
export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = "ApiError";
    this.status = status;
  }
}

let csrfValue = null; // a promise of the session's CSRF value, asked for once

function csrf() {
  csrfValue ??= fetch("/session", { credentials: "same-origin", cache: "no-store" })
    .then(async (response) => {
      if (!response.ok) throw new ApiError(response.status, LOGGED_OUT);
      return (await response.json()).csrf;
    })
    .catch((error) => {
      csrfValue = null; // ask again next time: the person may have logged in meanwhile
      throw error instanceof ApiError ? error : new ApiError(0, "Cannot reach the DuckLM server.");
    });
  return csrfValue;
}

async function headers(method, hasBody) {
  const result = {};
  if (!SAFE_METHODS.has(method)) result[CSRF_HEADER] = await csrf();
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
  if (response.status === 401) return new ApiError(401, LOGGED_OUT);
  return new ApiError(response.status, detail || `${response.status} ${response.statusText}`);
}

async function send(method, path, body, signal, retried = false) {
  const requestHeaders = await headers(method, body !== undefined);
  let response;
  try {
    response = await fetch(path, {
      method,
      credentials: "same-origin",
      headers: requestHeaders,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  } catch (error) {
    if (error.name === "AbortError") throw error;
    throw new ApiError(0, "Cannot reach the DuckLM server.");
  }
  if (response.status === 403 && CSRF_HEADER in requestHeaders && !retried) {
    // Logged in again (in another tab, say): a new session with a new CSRF value.
    csrfValue = null;
    return send(method, path, body, signal, true);
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

/**
 * A multipart POST (a file upload): the browser sets the Content-Type with its boundary.
 *
 * @param {string} path
 * @param {FormData} form
 * @returns {Promise<any>} The parsed JSON answer.
 */
export async function postForm(path, form) {
  let response;
  try {
    response = await fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { [CSRF_HEADER]: await csrf() },
      body: form,
    });
  } catch {
    throw new ApiError(0, "Cannot reach the DuckLM server.");
  }
  if (!response.ok) throw await errorFrom(response);
  return response.json();
}

/** End this browser's session on the server; a session already gone counts as ended. */
export async function logout() {
  try {
    await send("POST", "/logout");
  } catch (error) {
    if (!(error instanceof ApiError && error.status === 401)) throw error;
  }
  csrfValue = null;
}

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

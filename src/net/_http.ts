/**
 * One HTTP exchange for a network target, its failures sorted into those
 * worth retrying (429, 5xx, resets, timeouts) and those that are final.
 *
 * @module
 */

import { type FlowWatch, parseRetryAfter, RetryableError } from "./flow.ts";
import { knownFileLimit, networkSlots } from "./_slots.ts";
import {
  clearDeadline,
  type Deadline,
  setDeadline,
} from "../process/_deadlines.ts";
import {
  redact,
  redactClipped,
  urlSecrets,
  withoutCredentials,
} from "./template.ts";

/** A request. */
export interface HttpRequest {
  /** The method. */
  method: string;
  /** The URL. */
  url: string;
  /** The headers (values with secrets already filled in). */
  headers: Record<string, string>;
  /** The body, if any. */
  body?: string;
}

/** A 2xx response. */
export interface HttpResponse {
  /** The status. */
  status: number;
  /** The body as text. */
  text: string;
}

/** How {@linkcode send} sends: its timeout, secrets, signal and limits. */
export interface SendOptions {
  /** How long the whole exchange may take, redirects included, in ms. */
  timeoutMs: number;
  /** Values to hide in messages. */
  secrets: readonly string[];
  /** Aborting stops it. */
  signal?: AbortSignal | undefined;
  /** Told when the call waits for a call slot. */
  watch?: FlowWatch | undefined;
  /**
   * Same-origin redirects followed before the call fails.
   * @default {3}
   */
  maxRedirects?: number | undefined;
  /**
   * The most bytes of an answer read: past it the read stops and the call
   * fails, not retried.
   * @default {33554432 (32 MiB)}
   */
  maxResponseBytes?: number | undefined;
}

/** The default of `max_response_bytes`: 32 MiB. */
export const MAX_RESPONSE_BYTES = 32 * 1024 * 1024;

/** The most of an error answer read, for its message. */
const ERROR_BODY_BYTES = 64 * 1024;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * Sends one request with a timeout. Resolves with a 2xx response; throws a
 * {@linkcode RetryableError} for 429, 5xx, connection failures and timeouts,
 * and an `Error` for any other status. A redirect is followed only within
 * the request's origin (scheme, host and port), at most `maxRedirects`
 * times: a redirect to another origin is a final error naming where it
 * pointed, so no header or body ever leaves for another host. So is one
 * that would turn the request into a GET without its body (a 301, 302 or
 * 303 of a POST): what answers it was never asked what the request asked.
 * Secret values and URL passwords never appear in the messages.
 *
 * @param request The request.
 * @param options The timeout, secrets, signal and limits.
 * @returns The response.
 */
export async function send(
  request: HttpRequest,
  options: SendOptions,
): Promise<HttpResponse> {
  const { signal } = options;
  // Each call holds a socket: wait for a slot under the open-file limit
  // rather than fail with EMFILE.
  const slots = networkSlots();
  const wait = slots.acquire(signal);
  if (wait !== undefined) {
    const end = options.watch?.wait("slots");
    // It rejects only when the signal aborts.
    await wait.catch(() => {
      throw new Error(
        `${request.method} ${
          redact(withoutCredentials(request.url), options.secrets)
        } was interrupted`,
      );
    }).finally(end);
  }
  // The call in its slot, in this one function: each async layer of a call
  // costs a promise and a turn of the microtask queue, at c=256 thousands a
  // second.
  const call = new Call(request, options);
  let deadline: Deadline | undefined;
  let stoppedBy: Set<AbortController> | undefined;
  try {
    if (signal?.aborted) throw new Error(`${call.where} was interrupted`);
    // One timer for every call's deadline (the spawner's), and one listener
    // per run's signal: a timer and a dependent signal per call cost more
    // CPU than the rest of the call's own work at high concurrency.
    const stop = call.stop;
    deadline = setDeadline(
      performance.now() + options.timeoutMs,
      () => stop.abort(),
    );
    if (signal !== undefined) stoppedBy = follow(signal, stop);
    const maxRedirects = options.maxRedirects ?? 3;
    let current = request;
    for (let hops = 0;; hops++) {
      let response: Response;
      const init = fetchInit(current, call);
      try {
        response = await fetch(current.url, init);
      } catch (error) {
        throw invalid(error, current.url, init, call) ?? failure(error, call);
      }
      if (response.ok) {
        // A 2xx answer of a declared length within the cap, not decoded on
        // the way: read at once, here (readCapped's first case).
        const declared = response.headers.get("content-length");
        if (
          declared !== null && Number(declared) <= call.maxResponseBytes &&
          !response.headers.has("content-encoding")
        ) {
          try {
            return { status: response.status, text: await bodyText(response) };
          } catch (error) {
            throw failure(error, call);
          }
        }
      }
      if (!REDIRECTS.has(response.status)) return await answer(response, call);
      const location = response.headers.get("location");
      if (location === null) return await answer(response, call);
      await response.body?.cancel();
      const next = redirectTarget(current, response.status, location);
      const shown = JSON.stringify(
        redact(withoutCredentials(next?.url ?? location), call.secrets),
      );
      if (
        next === undefined ||
        new URL(next.url).origin !== new URL(current.url).origin
      ) {
        throw new Error(
          `${call.where} was redirected (HTTP ${response.status}) to another origin, ${shown}, which is not followed`,
        );
      }
      if (next.method !== current.method) {
        throw new Error(
          `${call.where} was redirected (HTTP ${response.status}) to ${shown}, which is not followed: the ${current.method} would arrive as a GET without its body; point the target at that address (a 307 or 308 keeps the method and body)`,
        );
      }
      if (hops >= maxRedirects) {
        throw new Error(
          `${call.where} was redirected more than ${maxRedirects} times (max_redirects), last to ${shown}`,
        );
      }
      current = next;
    }
  } finally {
    if (deadline !== undefined) clearDeadline(deadline);
    stoppedBy?.delete(call.stop);
    slots.release();
  }
}

/** The calls in flight that each signal stops, by the signal. */
const following = new WeakMap<AbortSignal, Set<AbortController>>();

/**
 * Makes `signal` abort `stop`: one listener per signal (a run's), however
 * many calls it stops.
 *
 * @returns The calls the signal stops, to take `stop` out of when done.
 */
function follow(
  signal: AbortSignal,
  stop: AbortController,
): Set<AbortController> {
  let calls = following.get(signal);
  if (calls === undefined) {
    const stopped = calls = new Set();
    following.set(signal, stopped);
    signal.addEventListener("abort", () => {
      for (const call of stopped) call.abort(signal.reason);
      stopped.clear();
    }, { once: true });
  }
  calls.add(stop);
  return calls;
}

/**
 * The request a redirect asks for, as fetch would make it: 303 (and 301 or
 * 302 of a POST) becomes a GET without a body, which `send` refuses unless
 * the request was a GET; 307 and 308 keep both. `undefined` when the
 * `Location` is not a URL.
 */
function redirectTarget(
  request: HttpRequest,
  status: number,
  location: string,
): HttpRequest | undefined {
  let url: URL;
  try {
    url = new URL(location, request.url);
  } catch (error) {
    // A Location that is no URL leads nowhere: refused like a foreign one.
    if (!(error instanceof TypeError)) throw error;
    return undefined;
  }
  const toGet = (status === 303 && request.method !== "HEAD") ||
    ((status === 301 || status === 302) && request.method === "POST");
  if (!toGet) return { ...request, url: url.href };
  const { "content-type": _type, ...headers } = request.headers;
  return { method: "GET", url: url.href, headers };
}

/**
 * What fetch is given besides the URL, redirects not followed: the URL and
 * init go to fetch as they are, since a Request made here would be copied
 * into another one inside fetch.
 */
function fetchInit(request: HttpRequest, call: Call): RequestInit {
  const init: RequestInit = {
    method: request.method,
    headers: request.headers,
    redirect: "manual",
    signal: call.stop.signal,
  };
  if (request.body !== undefined) init.body = request.body;
  return init;
}

/**
 * The final error of a request that cannot be made at all (a GET with a
 * body, a bad URL or header value), which fails the same way every time,
 * unlike the TypeErrors of a failed connection; `undefined` for any other
 * failure. Asked only once fetch has failed, by making the request again.
 */
function invalid(
  error: unknown,
  url: string,
  init: RequestInit,
  call: Call,
): Error | undefined {
  if (!(error instanceof TypeError) || call.stop.signal.aborted) {
    return undefined;
  }
  try {
    new Request(url, init);
  } catch (invalid) {
    if (!(invalid instanceof TypeError)) throw invalid;
    return new Error(
      `${call.where} cannot be sent: ${
        redact(withoutCredentials(invalid.message), call.secrets)
      }`,
    );
  }
  return undefined;
}

/**
 * What a call's messages and failures need to know of it: where it goes,
 * shown without secrets, made only when a message needs it.
 */
class Call {
  readonly maxResponseBytes: number;
  readonly timeoutMs: number;
  readonly signal: AbortSignal | undefined;
  /** Aborted when the call times out, or its signal aborts. */
  readonly stop: AbortController = new AbortController();
  #request: HttpRequest;
  #options: SendOptions;
  #secrets: readonly string[] | undefined;
  #where: string | undefined;

  constructor(request: HttpRequest, options: SendOptions) {
    this.#request = request;
    this.#options = options;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.timeoutMs = options.timeoutMs;
    this.signal = options.signal;
  }

  /**
   * The values to hide: those given, and the URL's own (a password goes
   * out as Basic auth, a query's `key=` as it is), whoever made the request.
   */
  get secrets(): readonly string[] {
    if (this.#secrets !== undefined) return this.#secrets;
    const own = urlSecrets(this.#request.url);
    return this.#secrets = own.length === 0
      ? this.#options.secrets
      : [...this.#options.secrets, ...own];
  }

  /** The method and URL, secrets hidden. */
  get where(): string {
    return this.#where ??= `${this.#request.method} ${
      redact(withoutCredentials(this.#request.url), this.secrets)
    }`;
  }
}

/** What a failed fetch or body read throws. */
function failure(error: unknown, call: Call): unknown {
  const { where, timeoutMs, secrets, signal } = call;
  if (signal?.aborted) return new Error(`${where} was interrupted`);
  if (call.stop.signal.aborted) {
    return new RetryableError(
      `${where} timed out after ${timeoutMs / 1000} s`,
    );
  }
  // fetch rejects with TypeError when the connection fails or is reset.
  if (
    error instanceof TypeError &&
    /os error 24\b|too many open files/i.test(`${error.message} ${error.cause}`)
  ) {
    return new RetryableError(
      `${where} failed: too many open files (EMFILE, ulimit -n ${
        knownFileLimit() ?? "unknown"
      }): lower concurrency or raise the limit`,
    );
  }
  if (error instanceof TypeError) {
    return new RetryableError(
      `${where} failed: ${
        redact(withoutCredentials(fetchReason(error)), secrets)
      }`,
    );
  }
  return error;
}

/**
 * Why fetch failed: Deno's "fetch failed" keeps the reason in `cause`
 * (`error sending request from … for URL (…): client error (SendRequest):
 * connection closed before message completed`), whose last part says it;
 * the call is named already.
 */
function fetchReason(error: TypeError): string {
  const cause = error.cause;
  if (error.message !== "fetch failed" || !(cause instanceof Error)) {
    return error.message;
  }
  const text = cause.message;
  const at = text.lastIndexOf("): ");
  return text.startsWith("error sending request") && at >= 0
    ? text.slice(at + 3)
    : text;
}

/**
 * Reads a body as text, at most `max` bytes: past them the read is cancelled
 * and `tooLarge()` thrown, or, without it, the text read so far returned. A
 * body whose length is declared and within the cap is read at once.
 */
async function readCapped(
  response: Response,
  max: number,
  tooLarge?: () => Error,
): Promise<string> {
  const declared = response.headers.get("content-length");
  // A declared length bounds what fetch reads, unless the body is
  // decompressed on the way (then the decoded size is unknown).
  if (declared !== null && !response.headers.has("content-encoding")) {
    const length = Number(declared);
    if (length <= max) return await bodyText(response);
    if (tooLarge !== undefined) {
      await response.body?.cancel();
      throw tooLarge();
    }
  }
  if (response.body === null) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (size + value.length > max) {
      await reader.cancel();
      if (tooLarge !== undefined) throw tooLarge();
      chunks.push(value.subarray(0, max - size));
      size = max;
      break;
    }
    chunks.push(value);
    size += value.length;
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return decoderFor(response).decode(bytes);
}

/** A body whose length is known to be within the cap, as text. */
async function bodyText(response: Response): Promise<string> {
  return decoderFor(response).decode(await response.arrayBuffer());
}

/** `application/json`, or a JSON-based type such as `application/problem+json`. */
const JSON_TYPE = /^\s*[\w.-]+\/(?:[\w.-]+\+)?json\s*(?:;|$)/i;

/**
 * The decoder of the charset the response declares (`text/plain;
 * charset=shift_jis`, a service older than UTF-8), else UTF-8, as for a
 * label the Encoding Standard does not know, and for JSON: `response.text()`
 * reads every body as UTF-8, so "café" in Latin-1 became "caf\u{fffd}".
 */
function decoderFor(response: Response): TextDecoder {
  const type = response.headers.get("content-type") ?? "";
  // JSON is UTF-8 whatever the label says (RFC 8259, 8.1: the charset
  // parameter has no effect), as fetch's own `json()` reads it.
  if (JSON_TYPE.test(type)) return new TextDecoder();
  const label = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1];
  if (label === undefined) return new TextDecoder();
  try {
    return new TextDecoder(label);
  } catch (error) {
    // An unknown label: read as UTF-8, as a body that names none.
    if (!(error instanceof RangeError)) throw error;
    return new TextDecoder();
  }
}

/** Reads the final response: its text if 2xx, else the error it means. */
async function answer(
  response: Response,
  call: Call,
): Promise<HttpResponse> {
  let text: string;
  try {
    text = response.ok
      ? await readCapped(response, call.maxResponseBytes, () =>
        new Error(
          `${call.where} answered more than ${call.maxResponseBytes} bytes (max_response_bytes): the answer was not read`,
        ))
      : await readCapped(response, ERROR_BODY_BYTES);
  } catch (error) {
    throw failure(error, call);
  }
  if (response.ok) return { status: response.status, text };
  const message = `${call.where} answered HTTP ${response.status}: ${
    redactClipped(text.trim(), call.secrets)
  }`;
  if (response.status === 429 || response.status >= 500) {
    throw new RetryableError(
      message,
      retryAfterOf(response.headers),
    );
  }
  throw new Error(message);
}

/**
 * The wait a refusal asks for: `retry-after-ms` (OpenAI's and Azure's, in
 * milliseconds, finer than the whole seconds of `Retry-After` beside it),
 * else `Retry-After`.
 */
function retryAfterOf(headers: Headers): number | undefined {
  const ms = headers.get("retry-after-ms")?.trim();
  if (ms !== undefined && ms !== "") {
    const wait = Number(ms);
    if (Number.isFinite(wait) && wait >= 0) return wait;
  }
  return parseRetryAfter(headers.get("retry-after"));
}

/**
 * Parses a 2xx answer's body as JSON; a body that is not JSON is a final
 * error quoting the start of the body, secrets hidden.
 *
 * @param where The call, as messages show it (`POST <url>`).
 * @param text The body.
 * @param secrets Values to hide.
 * @returns The parsed value.
 */
export function parseJsonAnswer(
  where: string,
  text: string,
  secrets: readonly string[],
): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new Error(
      `${
        redact(withoutCredentials(where), secrets)
      } answered with invalid JSON: ${
        JSON.stringify(redactClipped(text, secrets, 200, ""))
      }`,
    );
  }
}

/**
 * The error a 2xx answer of an API reports in its body instead of its
 * payload, as proxies do when the model fails once they have answered 200
 * (LiteLLM, OpenRouter: `{"error": {"message": "model overloaded"}}`): its
 * message, secrets hidden and clipped as an error body is. Retryable as a 5xx
 * is, unless its `code` (or `status`) is a 4xx other than 408 and 429: a
 * request the provider refuses is refused again.
 *
 * @param where The call, as messages show it (`POST <url>`).
 * @param status The answer's status.
 * @param reply The parsed answer.
 * @param payload The key a good answer has (`choices`, `data`).
 * @param secrets Values to hide.
 * @returns The error, or `undefined` when the answer reports none or has
 *   its payload (a list of at least one item) beside it.
 */
export function answeredError(
  where: string,
  status: number,
  reply: unknown,
  payload: string,
  secrets: readonly string[],
): Error | undefined {
  if (typeof reply !== "object" || reply === null) return undefined;
  const { error, [payload]: wanted } = reply as Record<string, unknown>;
  if (
    error === undefined || error === null ||
    (Array.isArray(wanted) && wanted.length > 0)
  ) return undefined;
  const fields = typeof error === "object"
    ? error as Record<string, unknown>
    : {};
  const text = typeof error === "string"
    ? error
    : typeof fields.message === "string"
    ? fields.message
    : JSON.stringify(error);
  const code = [fields.code, fields.status].find((c) =>
    (typeof c === "number" && Number.isInteger(c)) ||
    (typeof c === "string" && /^\d{3}$/.test(c))
  );
  const message = `${where} answered HTTP ${status} with an error${
    code !== undefined ? ` (code ${code})` : ""
  }: ${redactClipped(text.trim(), secrets)}`;
  const refused = Number(code) >= 400 && Number(code) < 500 &&
    Number(code) !== 408 && Number(code) !== 429;
  return refused ? new Error(message) : new RetryableError(message);
}

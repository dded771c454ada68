/**
 * One HTTP exchange for a network target, its failures sorted into those
 * worth retrying (429, 5xx, resets, timeouts) and those that are final.
 *
 * @module
 */

import { parseRetryAfter, RetryableError } from "./flow.ts";
import { redact } from "./template.ts";

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

function clip(text: string, max = 500): string {
  const t = text.trim();
  return t.length > max ? `${t.slice(0, max)}…` : t;
}

/**
 * Sends one request with a timeout. Resolves with a 2xx response; throws a
 * {@linkcode RetryableError} for 429, 5xx, connection failures and timeouts,
 * and an `Error` for any other status. Secret values never appear in the
 * messages.
 *
 * @param request The request.
 * @param timeoutMs How long the whole exchange may take.
 * @param secrets Values to hide in messages.
 * @param signal Aborting stops it.
 * @returns The response.
 */
export async function send(
  request: HttpRequest,
  timeoutMs: number,
  secrets: readonly string[],
  signal?: AbortSignal,
): Promise<HttpResponse> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const both = signal !== undefined
    ? AbortSignal.any([signal, timeout])
    : timeout;
  const where = `${request.method} ${redact(request.url, secrets)}`;
  let prepared: Request;
  try {
    prepared = new Request(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: both,
    });
  } catch (error) {
    // An invalid request (a GET with a body, a bad URL or header value) fails
    // the same way every time: final, unlike the TypeErrors of fetch below.
    if (!(error instanceof TypeError)) throw error;
    throw new Error(
      `${where} cannot be sent: ${redact(error.message, secrets)}`,
    );
  }
  let response: Response;
  let text: string;
  try {
    response = await fetch(prepared);
    text = await response.text();
  } catch (error) {
    if (signal?.aborted) throw new Error(`${where} was interrupted`);
    if (timeout.aborted) {
      throw new RetryableError(
        `${where} timed out after ${timeoutMs / 1000} s`,
      );
    }
    // fetch rejects with TypeError when the connection fails or is reset.
    if (error instanceof TypeError) {
      throw new RetryableError(
        `${where} failed: ${redact(error.message, secrets)}`,
      );
    }
    throw error;
  }
  if (response.ok) return { status: response.status, text };
  const message = `${where} answered HTTP ${response.status}: ${
    redact(clip(text), secrets)
  }`;
  if (response.status === 429 || response.status >= 500) {
    throw new RetryableError(
      message,
      parseRetryAfter(response.headers.get("retry-after")),
    );
  }
  throw new Error(message);
}

/**
 * Parses a 2xx answer's body as JSON; a body that is not JSON is a final
 * error quoting the start of the body, secrets hidden.
 *
 * @param url Where the answer came from, for the message.
 * @param text The body.
 * @param secrets Values to hide.
 * @returns The parsed value.
 */
export function parseJsonAnswer(
  url: string,
  text: string,
  secrets: readonly string[],
): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    throw new Error(
      `${url} answered with invalid JSON: ${
        JSON.stringify(redact(text, secrets).slice(0, 200))
      }`,
    );
  }
}

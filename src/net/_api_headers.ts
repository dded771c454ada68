/**
 * The headers a call sends: the settings' own, `${NAME}` in their values read
 * from the environment (each value a secret), and, for an OpenAI-compatible
 * API, the key from `api_key_env` and the JSON content type. One code for the
 * `openai` target, the judges, the embeddings and the `http` target.
 *
 * @module
 */

import { fillEnv, TemplateError, unsetVariable } from "./template.ts";
import { keyHeader } from "./_api_url.ts";
import { writtenCredentials } from "./_url_secrets.ts";

/** Headers with their variables read, and what of them is secret. */
export interface FilledHeaders {
  /** The headers to send, names in lower case. */
  headers: Record<string, string>;
  /** The values read from the environment (and the API key): to hide. */
  secrets: string[];
  /**
   * With `optional`, the error of the first variable that is not set: every
   * call fails with it (a replayed run makes none).
   */
  unset: TemplateError | undefined;
}

/**
 * Headers as the settings give them, each `${NAME}` in a value read from
 * the environment now.
 *
 * @param given The settings' `headers`.
 * @param env Reads an environment variable.
 * @param optional Whether a variable that is not set may wait for a call
 *   to fail (its header is then left out), rather than fail now.
 * @returns The headers, their secrets, and the first unset variable's error.
 * @throws {TemplateError} When a variable is not set and `optional` is not.
 */
export function fillHeaders(
  given: Readonly<Record<string, string>> | undefined,
  env: (name: string) => string | undefined,
  optional = false,
): FilledHeaders {
  const headers: Record<string, string> = {};
  const secrets: string[] = [];
  let unset: TemplateError | undefined;
  for (const [name, value] of Object.entries(given ?? {})) {
    let filled: { text: string; secrets: string[] };
    try {
      filled = fillEnv(value, env);
    } catch (error) {
      // A replayed run sends nothing: the header is needed by no call.
      if (!(error instanceof TemplateError) || !optional) throw error;
      unset ??= error;
      continue;
    }
    headers[name.toLowerCase()] = filled.text;
    secrets.push(...filled.secrets, ...writtenCredentials(name, value));
  }
  return { headers, secrets, unset };
}

/**
 * The headers of a call to an OpenAI-compatible API at `url`: the settings'
 * `headers` (see {@linkcode fillHeaders}), the key read from the variable
 * `api_key_env` names in the header the API takes it in (see
 * {@linkcode keyHeader}), and `content-type: application/json`. A header the
 * settings name that the key or the content type would take the place of is
 * refused before (`apiHeadersProblem` in `_settings_checks.ts`).
 *
 * @param url The endpoint's URL.
 * @param settings The `headers` and `api_key_env` settings.
 * @param env Reads an environment variable.
 * @param optional Whether a variable that is not set (the key's, a
 *   header's) may wait for a call to fail, rather than fail now.
 * @returns The headers, their secrets, and the first unset variable's error.
 * @throws {TemplateError} When a variable is not set and `optional` is not.
 */
export function apiHeaders(
  url: string,
  settings: {
    headers?: Readonly<Record<string, string>> | undefined;
    api_key_env?: string | undefined;
  },
  env: (name: string) => string | undefined,
  optional = false,
): FilledHeaders {
  const filled = fillHeaders(settings.headers, env, optional);
  if (settings.api_key_env !== undefined) {
    const key = env(settings.api_key_env);
    if (key === undefined || key === "") {
      const error = unsetVariable(settings.api_key_env);
      if (!optional) throw error;
      filled.unset ??= error;
    } else {
      const [name, value] = keyHeader(url, key);
      filled.headers[name] = value;
      filled.secrets.push(key);
    }
  }
  filled.headers["content-type"] = "application/json";
  return filled;
}

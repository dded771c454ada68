/**
 * The `http` target: any HTTP service, a JSON body template over the case,
 * the output read from the JSON response (or the raw body).
 *
 * @module
 */

import type { Case } from "../dataset/case.ts";
import {
  answeredError,
  type HttpResponse,
  parseJsonAnswer,
  send,
} from "../net/_http.ts";
import type { Budget } from "../net/budget.ts";
import {
  holdsSecret,
  redact,
  renderJsonTemplate,
  renderTemplate,
  urlSecrets,
  withoutCredentials,
} from "../net/template.ts";
import { fillHeaders } from "../net/_api_headers.ts";
import type { TargetContext, TargetResult } from "./target.ts";
import {
  NetworkFlow,
  type NetworkSettings,
  withoutFlow,
} from "../net/network.ts";
import { type CacheableTarget, targetVars } from "./openai_target.ts";
import {
  fillUrl,
  refuseSettings,
  schemeOf,
  targetTemplateProblem,
} from "../net/_settings_checks.ts";

/**
 * Settings of the `http` target (config keys).
 *
 * @example A GET with the input in the URL, the answer at a path in the JSON
 * ```ts
 * import { httpTarget, type HttpTargetSettings } from "./mod.ts";
 * const settings: HttpTargetSettings = {
 *   url: "http://127.0.0.1:8080/search?q={{input}}",
 *   method: "GET",
 *   headers: { authorization: "Bearer ${SEARCH_TOKEN}" },
 *   output: "results.0.title",
 * };
 * const target = httpTarget(settings, (name) => name === "SEARCH_TOKEN" ? "secret" : undefined);
 * const request = JSON.stringify(target.request({ input: "a b" }));
 * if (!request.includes("q=a%20b") || request.includes("secret")) throw new Error(request);
 * ```
 */
export interface HttpTargetSettings extends NetworkSettings {
  /** The URL; may hold `{{field}}` placeholders (filled URL-encoded). */
  url: string;
  /**
   * The method.
   * @default {"POST"}
   */
  method?: string | undefined;
  /** Headers; values may name environment variables as `${NAME}`. */
  headers?: Record<string, string> | undefined;
  /** A JSON body template over the case. Default `{"input": "{{input}}"}`; none for GET. */
  body?: unknown;
  /** A dot path into the JSON response for the output text (`choices.0.message.content`); default: the raw body. */
  output?: string | undefined;
}

/**
 * Reads a dot path (`a.b.0.c`, a leading `$.` allowed) in a JSON value.
 *
 * @param value The value.
 * @param path The path.
 * @returns What is there, or `undefined`.
 */
export function atPath(value: unknown, path: string): unknown {
  return atKeys(value, pathKeys(path));
}

/** A dot path's keys (`$.a.b.0` is `a`, `b`, `0`): read once, at the start. */
function pathKeys(path: string): readonly string[] {
  return path.replace(/^\$\.?/, "").split(".").filter((k) => k !== "");
}

/** An http target's `output` path, as written and as its keys. */
interface OutputPath {
  path: string;
  keys: readonly string[];
}

/** What is at `keys` in a JSON value, or `undefined`. */
function atKeys(value: unknown, keys: readonly string[]): unknown {
  let v = value;
  for (const key of keys) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[key];
  }
  return v;
}

/**
 * What an answer holds instead of its `output` path, for the message: a
 * JSON `null` where the path or a step of it is (`null at "answer"`) was
 * there and said nothing, which is not the same fault as a key missing.
 */
function lacking(json: unknown, output: OutputPath): string {
  const { path, keys } = output;
  let v = json;
  for (const [i, key] of keys.entries()) {
    if (v === null) {
      const at = i === 0
        ? ""
        : ` at ${JSON.stringify(keys.slice(0, i).join("."))}`;
      return `null${at} (output: ${JSON.stringify(path)})`;
    }
    if (typeof v !== "object") break;
    v = (v as Record<string, unknown>)[key];
  }
  return v === null
    ? `null at ${JSON.stringify(path)}`
    : `without ${JSON.stringify(path)}`;
}

/**
 * A target that sends each case to an HTTP service. A non-2xx answer is a
 * target error with its status and a trimmed body; 429, 5xx, resets and
 * timeouts are retried first. Secrets (`${NAME}` values, a URL password)
 * are hidden in the output and in every message.
 *
 * @param settings URL, method, headers, body template, output path, flow control.
 * @param env Reads an environment variable (for `${NAME}` in headers).
 * @param options A budget (no call starts once it is spent); whether a
 *   `${NAME}` that is not set may wait for the first call to fail (a
 *   replayed run calls nothing).
 * @returns The target.
 *
 * @example Call a service on loopback for each example
 * ```ts
 * import { httpTarget, runTarget } from "./mod.ts";
 * await using server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (request) => {
 *   const { input } = await request.json();
 *   return Response.json({ answer: String(input).toUpperCase() });
 * });
 * const target = httpTarget({ url: `http://127.0.0.1:${server.addr.port}/ask`, output: "answer" });
 * const examples = [{ example_id: "d#1", line: 1, case: { input: "hi" } }];
 * const [unit] = await Array.fromAsync(ReadableStream.from(examples).pipeThrough(runTarget(target)));
 * if (unit?.output !== "HI" || unit.target?.status !== 200) throw new Error("unexpected");
 * ```
 */
export function httpTarget(
  settings: HttpTargetSettings,
  env?: (name: string) => string | undefined,
  options: { budget?: Budget | undefined; optionalKey?: boolean | undefined } =
    {},
): CacheableTarget {
  // A config is checked at its lines first; a script's settings here.
  refuseSettings(
    "httpTarget",
    targetTemplateProblem({ ...settings, type: "http" }, []),
  );
  const method = (settings.method ?? "POST").toUpperCase();
  // A replayed run sends nothing: a header whose variable is not set is
  // needed by no call, and fails each call made.
  const filled = fillHeaders(
    settings.headers,
    env ?? ((name) => Deno.env.get(name)),
    options.optionalKey,
  );
  const { headers, unset } = filled;
  const secrets = [...urlSecrets(settings.url), ...filled.secrets];
  const template = settings.body ??
    (method === "GET" ? undefined : { input: "{{input}}" });
  if (template !== undefined) headers["content-type"] ??= "application/json";
  const flow = new NetworkFlow(settings);
  // The output path is read here once, not at each answer.
  const outputPath = settings.output === undefined
    ? undefined
    : { path: settings.output, keys: pathKeys(settings.output) };
  // A placeholder before the first ":" lets a case fill the scheme, which
  // the config's check read as http: each filling is checked (a case's
  // "file" would read a file of this machine).
  const colon = settings.url.indexOf(":");
  const caseScheme = colon > 0 && settings.url.slice(0, colon).includes("{{");
  const request = (testCase: Case) => {
    const vars = targetVars(testCase);
    const url = fillUrl(
      settings.url,
      (placeholder) => renderTemplate(placeholder, vars),
    );
    return {
      method,
      url,
      ...(template !== undefined
        ? { body: renderJsonTemplate(template, vars) }
        : {}),
    };
  };
  return {
    identity: { type: "http", ...withoutFlow(settings) },
    request,
    async call(testCase: Case, context: TargetContext): Promise<TargetResult> {
      if (unset !== undefined) throw unset;
      options.budget?.claim();
      const req = request(testCase);
      const body = req.body !== undefined
        ? JSON.stringify(req.body)
        : undefined;
      const shown = redact(withoutCredentials(req.url), secrets);
      const scheme = caseScheme ? schemeOf(req.url) : undefined;
      if (scheme !== undefined) throw new Error(`${method} ${shown} ${scheme}`);
      const { result, attempts } = await flow.run(
        async () => {
          const answer = await send(
            {
              method,
              url: req.url,
              headers,
              ...(body !== undefined ? { body } : {}),
            },
            {
              timeoutMs: flow.timeoutMs,
              maxRedirects: flow.maxRedirects,
              maxResponseBytes: flow.maxResponseBytes,
              secrets,
              signal: context.signal,
              watch: context.flow,
            },
          );
          // An error a proxy answers with 200 is retried as its 5xx would be.
          const failed = outputPath === undefined
            ? errorAlone(`${method} ${shown}`, answer, secrets)
            : errorInstead(`${method} ${shown}`, answer, outputPath, secrets);
          if (failed !== undefined) throw failed;
          return answer;
        },
        context.signal,
        context.flow,
      );
      const info = { status: result.status, attempts };
      // An answer is not rewritten: one that echoes a secret is not kept
      // (nor cached), rather than scored with `***` in it.
      const kept = (output: string) => {
        if (!holdsSecret(output, secrets)) return { output, info };
        throw new Error(
          `${method} ${shown} answered with a secret the config sends (a \${VAR} value or a URL's password): the answer is not kept`,
        );
      };
      if (outputPath === undefined) return kept(result.text);
      const json = parseJsonAnswer(
        `${method} ${shown}`,
        result.text,
        secrets,
      );
      const output = atKeys(json, outputPath.keys);
      if (output === undefined || output === null) {
        throw new Error(
          `${method} ${shown} answered ${lacking(json, outputPath)}`,
        );
      }
      return kept(
        typeof output === "string" ? output : JSON.stringify(output),
      );
    },
  };
}

/**
 * The error a 2xx answer reports when it is read whole (no `output`): a JSON
 * object whose only key is `error`, holding a message or an object
 * (`{"error": "upstream timeout"}`, `{"error": {"message": ...}}`), as a
 * service or a proxy in front of it answers 200 when it failed. Scored as
 * the answer, it was a wrong answer where there was none. Any other body
 * (`{"error": null, ...}`, `{"error": ""}`, text that is not JSON) is the
 * answer; a config whose service answers `{"error": ...}` on purpose names
 * it with `output: error`.
 */
function errorAlone(
  where: string,
  answer: HttpResponse,
  secrets: readonly string[],
): Error | undefined {
  // Most answers are not that: no parse for them.
  if (!/^\s*\{\s*"error"\s*:/.test(answer.text)) return undefined;
  // Not JSON: a raw body, the answer as it is.
  const json = jsonOrUndefined(answer.text);
  if (typeof json !== "object" || json === null) return undefined;
  const keys = Object.keys(json);
  if (keys.length !== 1 || keys[0] !== "error") return undefined;
  const error = (json as { error: unknown }).error;
  const told = typeof error === "string"
    ? error.trim() !== ""
    : typeof error === "object" && error !== null && !Array.isArray(error);
  return told
    ? answeredError(where, answer.status, json, "error", secrets)
    : undefined;
}

/**
 * The error a 2xx answer reports where its `output` path should be (`{"error":
 * {"message": "upstream timeout"}}` from a service or its proxy): quoted, and
 * retried as the `openai` target's 200 errors are. Without it, the call said
 * only that the path was missing. An answer that has the path, or no
 * `error` (null, empty), is left to the caller.
 */
function errorInstead(
  where: string,
  answer: HttpResponse,
  output: OutputPath,
  secrets: readonly string[],
): Error | undefined {
  // Most answers have no error member: no second parse for them.
  if (!answer.text.includes('"error"')) return undefined;
  // Not JSON: the caller names it as such.
  const json = jsonOrUndefined(answer.text);
  if (json === undefined) return undefined;
  const found = atKeys(json, output.keys);
  if (found !== undefined && found !== null) return undefined;
  const error = (json as { error?: unknown } | null)?.error;
  if (error === undefined || error === null || error === "") return undefined;
  return answeredError(where, answer.status, json, output.path, secrets);
}

/**
 * A body parsed as JSON, or `undefined` when it is not JSON: the two
 * readers above then leave the answer to their caller.
 */
function jsonOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    // Only a syntax error means "not JSON"; anything else is a fault.
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
}

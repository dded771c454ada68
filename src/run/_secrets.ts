// The secrets a suite's config sends (API keys, `${VAR}` header values, URL
// passwords) and the two stages that keep them out of what a run writes
// when they come back from a program evalpipe does not watch: a subprocess
// target or scorer inherits the environment, so its stderr, its output or
// its verdict's reason can echo a key the network clients would have hidden.

import type { Unit } from "../dataset/unit.ts";
import type { Score } from "../score/mod.ts";
import { urlSecrets } from "../net/template.ts";
import { ENV_VARIABLES, writtenCredentials } from "../net/_url_secrets.ts";

/** A placeholder, as an http target fills it in a URL. */
const PLACEHOLDER = String.raw`\{\{\s*[\w.-]+\s*\}\}`;

/**
 * A URL's start as the URL parser and fetch read it: spaces before it
 * dropped, its scheme a placeholder may fill in whole or in part
 * (`{{metadata.scheme}}://`, `http{{metadata.s}}://`), and http's and
 * https's need no "//" (`http:ann:pw@host` is `http://ann:pw@host`), nor
 * does a scheme a placeholder fills (urlSecrets reads it as http). Other
 * text with a "word:" is no URL fetch sends: what it holds is left shown.
 */
const URL_START = new RegExp(
  `^[\\0- ]*(?:(?:[a-z]|${PLACEHOLDER})(?:[a-z0-9+.-]|${PLACEHOLDER})*:\\/\\/|(?:https?|(?:[a-z0-9+.-]*${PLACEHOLDER})+[a-z0-9+.-]*):)`,
  "i",
);

/**
 * The values a config sends as secrets, read from the environment: each
 * `api_key_env`'s variable, each `${VAR}` in a `headers` value and the
 * text a credential's header writes out (`Bearer sk-…`), each URL's
 * password (and its `user:password` pair) and credential in its query
 * (`?key=...`), wherever in the config they
 * stand (targets, a matrix's targets, judges, embeddings). Unset or empty
 * variables are left out: nothing of them can be echoed.
 *
 * @param config The checked config.
 * @param env Reads an environment variable.
 * @returns The values, without repeats.
 */
export function configSecrets(
  config: unknown,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): string[] {
  const found = new Set<string>();
  const take = (name: string) => {
    const value = env(name);
    if (value !== undefined && value !== "") found.add(value);
  };
  const walk = (value: unknown, key: string | undefined) => {
    if (typeof value === "string") {
      if (key === "api_key_env") take(value);
      if (
        (value.includes("@") || value.includes("=")) && URL_START.test(value)
      ) {
        for (const s of urlSecrets(value)) found.add(s);
      }
      return;
    }
    if (Array.isArray(value)) {
      for (const item of value) walk(item, undefined);
      return;
    }
    if (value === null || typeof value !== "object") return;
    for (const [k, v] of Object.entries(value)) {
      if (k === "headers" && v !== null && typeof v === "object") {
        for (const [name, h] of Object.entries(v)) {
          if (typeof h !== "string") continue;
          for (const [, variable] of h.matchAll(ENV_VARIABLES)) take(variable!);
          for (const text of writtenCredentials(name, h)) found.add(text);
        }
      }
      walk(v, k);
    }
  };
  walk(config, undefined);
  return [...found];
}

/**
 * The stages that guard a run's units and Scores against `secrets`: a
 * unit's `target.error` is redacted, and a unit whose output or tool calls
 * hold a secret of 8 characters or more (in any form an echo gives it) is
 * turned into a target error, its answer not kept (a `***` in its place
 * would be scored as if the system had said it), as the network targets
 * do; a Score's reason and diagnostics are redacted.
 *
 * @param secrets The values to hide (from {@linkcode configSecrets}).
 * @returns The unit stage and the Score stage.
 */
export async function secretGuards(secrets: readonly string[]): Promise<{
  units: () => TransformStream<Unit[], Unit[]>;
  scores: () => TransformStream<Score[], Score[]>;
}> {
  const { holdsSecret, redact: redactWhole } = await import(
    "../net/template.ts"
  );
  // A program's stderr reaches a message clipped at its start and its end
  // (`…` where it was cut) before this stage sees it: a secret across a cut
  // is left in part, its start before the `…` or its end after it.
  const forms = secrets.flatMap((s) => [
    s,
    encodeURIComponent(s),
    JSON.stringify(s).slice(1, -1),
  ]).filter((f) => f.length >= 4);
  const redact = (text: string, hide: readonly string[]) => {
    let out = redactWhole(text, hide);
    if (!out.includes("…")) return out;
    for (const form of forms) {
      for (let k = form.length - 1; k >= 4; k--) {
        const head = form.slice(0, k);
        if (out.includes(`${head}…`)) out = out.split(`${head}…`).join("***…");
        const tail = form.slice(form.length - k);
        if (out.includes(`…${tail}`)) out = out.split(`…${tail}`).join("…***");
      }
    }
    return out;
  };
  const guardUnit = (unit: Unit) => {
    const target = unit.target;
    if (target?.error !== undefined) {
      target.error = redact(target.error, secrets);
      return;
    }
    const said = unit.tool_calls === undefined
      ? unit.output ?? ""
      : `${unit.output ?? ""}\n${JSON.stringify(unit.tool_calls)}`;
    if (!holdsSecret(said, secrets)) return;
    unit.output = null;
    delete unit.tool_calls;
    unit.target = {
      latency_ms: target?.latency_ms ?? 0,
      error:
        "The target answered with a secret the config sends (an API key, a ${VAR} value or a URL's password): the answer is not kept",
    };
  };
  // Only what changed is replaced: Scores of one unit may share their
  // diagnostics, and most Scores hold no secret.
  const hidden = (value: unknown): unknown => {
    if (typeof value === "string") return redact(value, secrets);
    if (Array.isArray(value)) return value.map(hidden);
    if (value === null || typeof value !== "object") return value;
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, hidden(v)]),
    );
  };
  const guardScore = (score: Score) => {
    if (score.reason !== undefined) {
      const reason = redact(score.reason, secrets);
      if (reason !== score.reason) score.reason = reason;
    }
    if (score.diagnostics.length === 0) return;
    const text = JSON.stringify(score.diagnostics);
    if (redact(text, secrets) !== text) {
      score.diagnostics = hidden(score.diagnostics) as Score["diagnostics"];
    }
  };
  return {
    units: () =>
      new TransformStream<Unit[], Unit[]>({
        transform(batch, controller) {
          for (const unit of batch) guardUnit(unit);
          controller.enqueue(batch);
        },
      }),
    scores: () =>
      new TransformStream<Score[], Score[]>({
        transform(batch, controller) {
          for (const score of batch) guardScore(score);
          controller.enqueue(batch);
        },
      }),
  };
}

/**
 * The guards of a run of `config` (see {@linkcode secretGuards}), or
 * `undefined` when it sends no secret that is set.
 *
 * @param config The checked config.
 * @returns The unit stage and the Score stage, or `undefined`.
 */
export async function guardsFor(
  config: unknown,
): Promise<Awaited<ReturnType<typeof secretGuards>> | undefined> {
  const secrets = configSecrets(config);
  return secrets.length === 0 ? undefined : await secretGuards(secrets);
}

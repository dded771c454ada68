/**
 * What a config's templates may hold, checked before any call: a placeholder
 * is a field's name alone (`{{input}}`, `{{metadata.topic}}`), as
 * net/template.ts fills it (that module loads with the targets, not the
 * config), never `expected`; an `http` target reads `${NAME}` in header
 * values only; an `llm_judge` rubric names only the fields a judge is
 * given. Anything else would reach the service as written, or fail every
 * case.
 *
 * @module
 */

/** A template that cannot be sent as meant: where, and why. */
export interface TemplateProblem {
  /** The string's path in the config. */
  path: PropertyKey[];
  /** What is wrong, after the path in the message. */
  detail: string;
}

import { RUBRIC_FIELDS, RUBRIC_TREES } from "../scorers/_judge_vars.ts";
import { nearest } from "../base/words.ts";
import { clip } from "../base/terminal.ts";

/** A text's problem, or `undefined`. */
type Check = (text: string) => string | undefined;

/** A placeholder naming `expected` or a path below it. */
const EXPECTED = /\{\{\s*(expected(?:\.[\w-]+)*)\s*\}\}/;

/** A placeholder evalpipe fills, whole. */
const PLACEHOLDER = /^\{\{\s*[A-Za-z_][\w-]*(?:\.[\w-]+)*\s*\}\}$/;

/** What looks like template syntax: `{{ ... }}` and `{% ... %}`. */
const SYNTAX = /\{\{[\s\S]*?\}\}|\{%[\s\S]*?%\}/g;

/** `${NAME}`, as fillEnv reads it in a header value. */
const VARIABLE = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;

const FIELD_ALONE =
  "a placeholder is a field's name alone, as {{input}} or {{metadata.topic}}";

const expected: Check = (text) => {
  const name = EXPECTED.exec(text)?.[1];
  return name === undefined
    ? undefined
    : `names {{${name}}}, which a target is never given: expected is the answer key, for scorers only`;
};

/** Syntax of other template languages (filters, tags) evalpipe would send as written. */
const unfilled: Check = (text) => {
  if (!text.includes("{{") && !text.includes("{%")) return undefined;
  for (const [syntax] of text.matchAll(SYNTAX)) {
    if (PLACEHOLDER.test(syntax)) continue;
    const why = syntax.startsWith("{%")
      ? "tags ({% %}) are not supported"
      : syntax.includes("|")
      ? 'filters ("|") are not supported'
      : "it is not a field's name";
    return `has ${
      clip(syntax, 60)
    }, which evalpipe would send as written: ${why}; ${FIELD_ALONE}`;
  }
  const rest = text.replace(SYNTAX, "");
  const open = rest.search(/\{\{|\{%/);
  if (open < 0) return undefined;
  const opener = rest.slice(open, open + 2);
  return `has ${
    clip(rest.slice(open), 60)
  }, which evalpipe would send as written: no "${
    opener === "{{" ? "}}" : "%}"
  }" closes "${opener}"; ${FIELD_ALONE}`;
};

/** Every placeholder evalpipe fills, and the field's path it names. */
const PLACEHOLDERS = /\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;

/**
 * A placeholder naming a field a judge is never given (`{{inptu}}`, or a
 * part of a text, `{{input.0}}`): no case could fill it, so every Score
 * would be an error. A field of `metadata` is the case's to have or lack.
 */
const notRubricField: Check = (text) => {
  for (const [, name] of text.matchAll(PLACEHOLDERS)) {
    const field = name!.split(".", 1)[0]!;
    const known = RUBRIC_FIELDS.includes(field);
    if (known && (field === name || RUBRIC_TREES.includes(field))) continue;
    const near = known ? undefined : nearest(field, RUBRIC_FIELDS);
    return `names {{${name}}}, which a judge is never given; ${
      known
        ? `it is given ${field} as text, {{${field}}}`
        : near !== undefined
        ? `did you mean {{${near}${name!.slice(field.length)}}}?`
        : `a rubric names ${
          RUBRIC_FIELDS.map((f) => `{{${f}}}`).join(", ")
        } or a field of metadata, {{metadata.NAME}}`
    }`;
  }
  return undefined;
};

const placeholderInHeader: Check = (text) => {
  const syntax = /\{\{[\s\S]*?\}\}/.exec(text)?.[0];
  return syntax === undefined
    ? undefined
    : `has ${
      clip(syntax, 60)
    }, which evalpipe would send as written: a header value reads \${NAME} (an environment variable) only; put case fields in "url" or "body"`;
};

const variableOutsideHeaders: Check = (text) => {
  const variable = VARIABLE.exec(text)?.[0];
  return variable === undefined
    ? undefined
    : `has ${variable}, which evalpipe would send as written: only header values read environment variables; send the secret in a header, e.g. headers: { authorization: "Bearer ${variable}" }`;
};

/**
 * The first problem of a target's templates: `{{expected}}` anywhere
 * (openai's `system` and `prompt`, http's `url`, `headers` and `body`), then
 * syntax evalpipe does not fill, then, for `http`, a placeholder in a header
 * or a `${NAME}` outside the headers.
 *
 * @param target A target's config.
 * @param at Its path in the config.
 * @returns The problem, or `undefined`.
 */
export function targetTemplateProblem(
  target: unknown,
  at: readonly PropertyKey[],
): TemplateProblem | undefined {
  if (!isObject(target)) return undefined;
  return first(
    target,
    at,
    ["system", "prompt", "url", "headers", "body"],
    expected,
  ) ??
    first(target, at, ["system", "prompt", "url", "body"], unfilled) ??
    (target.type === "http"
      ? first(target, at, ["headers"], placeholderInHeader) ??
        first(target, at, ["url", "body"], variableOutsideHeaders)
      : undefined);
}

/**
 * The first problem of an `llm_judge`'s `rubric`, a template over the unit:
 * syntax evalpipe does not fill, then a field a judge is never given.
 *
 * @param scorer A scorer's config.
 * @param at Its path in the config.
 * @returns The problem, or `undefined`.
 */
export function rubricTemplateProblem(
  scorer: unknown,
  at: readonly PropertyKey[],
): TemplateProblem | undefined {
  if (!isObject(scorer) || scorer.type !== "llm_judge") return undefined;
  return first(scorer, at, ["rubric"], unfilled) ??
    first(scorer, at, ["rubric"], notRubricField);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** The first string under `fields` that `check` finds a problem in. */
function first(
  settings: Record<string, unknown>,
  at: readonly PropertyKey[],
  fields: readonly string[],
  check: Check,
): TemplateProblem | undefined {
  const search = (
    value: unknown,
    path: PropertyKey[],
  ): TemplateProblem | undefined => {
    if (typeof value === "string") {
      const detail = check(value);
      return detail !== undefined ? { path, detail } : undefined;
    }
    if (!isObject(value)) return undefined;
    for (const [k, v] of Object.entries(value)) {
      const found = search(v, [...path, Array.isArray(value) ? Number(k) : k]);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  for (const field of fields) {
    if (!Object.hasOwn(settings, field)) continue;
    const found = search(settings[field], [...at, field]);
    if (found !== undefined) return found;
  }
  return undefined;
}

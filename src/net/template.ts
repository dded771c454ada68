/**
 * Templates over a case: `{{input}}`, `{{context}}`, `{{metadata.topic}}`,
 * any field, in prompt text and in JSON bodies.
 *
 * @module
 */

import { clip } from "../base/terminal.ts";
import { nearest } from "../base/words.ts";
import {
  CREDENTIAL_NAMES,
  ENV_VARIABLES,
  keyLikeName,
} from "./_url_secrets.ts";

export { urlSecrets } from "./_url_secrets.ts";

/** A placeholder that names a field the case does not have. */
export class TemplateError extends Error {
  /**
   * Which template, as its caller named it to {@linkcode renderTemplate}
   * (`system prompt`), when it did.
   */
  readonly template: string | undefined;
  /**
   * Creates the error.
   *
   * @param message What is missing.
   * @param template Which template, when its caller named it.
   */
  constructor(message: string, template?: string) {
    super(message);
    this.name = "TemplateError";
    this.template = template;
  }
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}$/;

function lookup(
  vars: Record<string, unknown>,
  path: string,
  name?: string,
): unknown {
  // Most placeholders name a field of the case itself: no split for them.
  if (!path.includes(".") && Object.hasOwn(vars, path)) return vars[path];
  let value: unknown = vars;
  for (const key of path.split(".")) {
    if (
      typeof value !== "object" || value === null || !Object.hasOwn(value, key)
    ) {
      // A field kept under metadata (a CSV column) is named with its path;
      // a typo of a field the case has, with the field.
      const near = inMetadata(vars, path)
        ? `metadata.${path}`
        : path.includes(".")
        ? undefined
        : nearest(path, Object.keys(vars));
      throw new TemplateError(
        `The ${
          name ?? "template"
        } names {{${path}}}, which this case does not have${
          near !== undefined ? `; did you mean {{${near}}}?` : ""
        }`,
        name,
      );
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

/** Whether `path` names no field of the case but one of its metadata. */
function inMetadata(vars: Record<string, unknown>, path: string): boolean {
  const metadata = vars.metadata;
  const head = path.split(".", 1)[0]!;
  return !Object.hasOwn(vars, head) && typeof metadata === "object" &&
    metadata !== null && Object.hasOwn(metadata, head);
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  // Context chunks read best as paragraphs.
  if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    return value.join("\n\n");
  }
  return JSON.stringify(value) ?? "";
}

/**
 * Fills `{{name}}` and `{{a.b}}` placeholders with the named values: strings
 * as they are, lists of strings as paragraphs, anything else as JSON.
 *
 * @param template The text.
 * @param vars The values.
 * @param name What the template is, for the error (`rubric`): "The rubric
 *   names {{topic}}, which this case does not have".
 * @returns The text filled in.
 * @throws {TemplateError} When a placeholder names a value that is absent.
 *
 * @example
 * ```ts
 * import { renderTemplate } from "./template.ts";
 * const text = renderTemplate("Q: {{input}}\n{{context}}", { input: "why?", context: ["a", "b"] });
 * if (text !== "Q: why?\na\n\nb") throw new Error(text);
 * ```
 */
export function renderTemplate(
  template: string,
  vars: Record<string, unknown>,
  name?: string,
): string {
  const parts = partsOf(template);
  if (parts.length === 1) return template;
  // Texts at even places, placeholders' paths at odd ones, left to right.
  let out = parts[0] as string;
  for (let i = 1; i < parts.length; i += 2) {
    out += asText(lookup(vars, parts[i] as string, name)) +
      (parts[i + 1] as string);
  }
  return out;
}

/**
 * Whether a text has a placeholder {@linkcode renderTemplate} fills.
 *
 * @param template The text.
 * @returns Whether it names a value (`{{input}}`, `{{metadata.topic}}`).
 *
 * @example
 * ```ts
 * import { hasPlaceholder } from "./template.ts";
 * if (!hasPlaceholder("Q: {{ input }}") || hasPlaceholder("Is it polite?")) throw new Error();
 * ```
 */
export function hasPlaceholder(template: string): boolean {
  return partsOf(template).length > 1;
}

/** Templates split at their placeholders, by template: a run has few. */
const partsByTemplate = new Map<string, readonly string[]>();

/**
 * A template's texts and placeholder paths, alternating, text first and
 * last: split once, not per case.
 */
function partsOf(template: string): readonly string[] {
  let parts = partsByTemplate.get(template);
  if (parts === undefined) {
    // split() with a capturing group alternates texts and captures.
    parts = template.split(PLACEHOLDER);
    // A program that renders ever new templates must not grow this forever.
    if (partsByTemplate.size >= 256) partsByTemplate.clear();
    partsByTemplate.set(template, parts);
  }
  return parts;
}

/**
 * Fills a JSON template: every string is rendered with
 * {@linkcode renderTemplate}, except that a string that is one placeholder
 * alone (`"{{context}}"`) becomes the value itself, keeping its type.
 *
 * @param template A JSON value.
 * @param vars The values.
 * @returns The filled value.
 * @throws {TemplateError} When a placeholder names a value that is absent.
 */
export function renderJsonTemplate(
  template: unknown,
  vars: Record<string, unknown>,
): unknown {
  if (typeof template === "string") {
    const whole = WHOLE.exec(template);
    return whole !== null
      ? lookup(vars, whole[1]!)
      : renderTemplate(template, vars);
  }
  if (Array.isArray(template)) {
    return template.map((t) => renderJsonTemplate(t, vars));
  }
  if (typeof template === "object" && template !== null) {
    return Object.fromEntries(
      Object.entries(template).map((
        [k, v],
      ) => [k, renderJsonTemplate(v, vars)]),
    );
  }
  return template;
}

/**
 * Replaces `${NAME}` with the environment variable NAME, for header values
 * that carry secrets; the config keeps only the names.
 *
 * @param text The text, e.g. `Bearer ${OPENAI_API_KEY}`.
 * @param env Reads a variable.
 * @returns The text and the secret values it took in.
 * @throws {TemplateError} When a named variable is not set.
 */
export function fillEnv(
  text: string,
  env: (name: string) => string | undefined = (name) => Deno.env.get(name),
): { text: string; secrets: string[] } {
  const secrets: string[] = [];
  const filled = text.replace(
    ENV_VARIABLES,
    (_, name: string) => {
      const value = env(name);
      if (value === undefined) throw unsetVariable(name);
      if (value !== "") secrets.push(value);
      return value;
    },
  );
  return { text: filled, secrets };
}

/**
 * The error of an environment variable that is not set, naming it; by its
 * start alone when the name looks like a key pasted in its place
 * (`api_key_env: gsk_…`, `${hf_…}`; see {@linkcode keyLikeName}), which
 * the message would put in every log it reaches.
 *
 * @param name The variable's name.
 * @returns The error.
 */
export function unsetVariable(name: string): TemplateError {
  return new TemplateError(
    keyLikeName(name)
      ? `The environment variable ${
        name.slice(0, 4)
      }… is not set, and its name looks like a key: name the variable that holds the key (as OPENAI_API_KEY), never the key itself`
      : `The environment variable ${name} is not set`,
  );
}

const encoder = new TextEncoder();

function base64(bytes: Uint8Array): string {
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary);
}

/**
 * The base64 text of `secret` wherever it starts in an encoded stream: for
 * each of the three alignments, the characters that only the secret's bytes
 * decide (those shared with the bytes around it vary, and are left).
 */
function base64Forms(secret: string): string[] {
  const bytes = encoder.encode(secret);
  const forms: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const padded = new Uint8Array(shift + bytes.length);
    padded.set(bytes, shift);
    const text = base64(padded);
    const first = Math.ceil((shift * 8) / 6);
    const last = Math.floor(((shift + bytes.length) * 8) / 6);
    const core = text.slice(first, last);
    forms.push(core, core.replaceAll("+", "-").replaceAll("/", "_"));
  }
  forms.push(base64(bytes)); // with its padding
  return forms;
}

const formsOf = new Map<string, readonly string[]>();

/**
 * The forms a secret can take in a text it was echoed into: as it is and
 * as sent (without the whitespace around it that fetch strips), JSON-escaped, URL-encoded (upper or lower case hex, `+` or `%20` for a
 * space) and base64 (standard or URL-safe, at any alignment). Longest first,
 * so that a form holding another is replaced whole.
 */
function secretForms(secret: string): readonly string[] {
  if (secret.length < 4) return [];
  let forms = formsOf.get(secret);
  if (forms === undefined) {
    // fetch strips a header value's leading and trailing whitespace: a key
    // pasted with its line break (a CI secret, a CRLF .env) goes out, and
    // comes back in an echo, without it.
    const sent = secret.replace(/^[\t\n\r ]+|[\t\n\r ]+$/g, "");
    const set = new Set<string>();
    for (const value of sent === secret ? [secret] : [secret, sent]) {
      const url = encodeURIComponent(value);
      set.add(value);
      set.add(JSON.stringify(value).slice(1, -1));
      set.add(
        JSON.stringify(JSON.stringify(value).slice(1, -1)).slice(1, -1),
      );
      set.add(url);
      set.add(url.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()));
      set.add(url.replaceAll("%20", "+"));
      for (const form of base64Forms(value)) set.add(form);
    }
    forms = [...set].filter((f) => f.length >= 4).sort((a, b) =>
      b.length - a.length
    );
    // Secrets are few (a key, the ${VAR} values): kept for the process.
    formsOf.set(secret, forms);
  }
  return forms;
}

/**
 * Hides secret values in a text (an error message, a response body, a
 * model's answer): each secret as it is and in the forms an echo gives it
 * (JSON-escaped, URL-encoded, base64).
 *
 * @param text The text.
 * @param secrets The values to hide; those shorter than 4 characters are left.
 * @returns The text with each secret replaced by `***`.
 *
 * @example A key echoed JSON-escaped is hidden too
 * ```ts
 * import { redact } from "./template.ts";
 * const key = 'Zq"9\\Lm-secret';
 * const echoed = JSON.stringify({ error: `bad key ${key}` });
 * if (redact(echoed, [key]).includes("secret")) throw new Error("leaked");
 * ```
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  // Longest first across all secrets: a password's forms lie inside those
  // of the `user:password` pair, which must be replaced whole.
  const forms = secrets.length === 1
    ? secretForms(secrets[0]!)
    : secrets.flatMap(secretForms).sort((a, b) => b.length - a.length);
  for (const form of forms) {
    if (out.includes(form)) out = out.split(form).join("***");
  }
  return out;
}

/** The shortest secret an answer is searched for: shorter ones are words. */
export const ANSWER_SECRET_MIN = 8;

/**
 * Whether an answer (a model's text and tool calls, a service's output)
 * holds a secret the config sends, in any form an echo gives it. Answers are
 * not rewritten: one that holds a secret is not kept at all (the caller
 * makes it an error), for a `***` in its place would be scored as if the
 * system had said it. Values shorter than {@linkcode ANSWER_SECRET_MIN}
 * characters (`TENANT=hello`) are not looked for: a model may well say them.
 *
 * @param text The answer.
 * @param secrets The values the config sends.
 * @returns Whether one of them is in it.
 *
 * @example
 * ```ts
 * import { holdsSecret } from "./template.ts";
 * const key = "sk-0123456789";
 * if (!holdsSecret(`echo ${btoa(key)}`, [key])) throw new Error("missed");
 * if (holdsSecret("hello", ["hello"])) throw new Error("a word is no secret");
 * ```
 */
export function holdsSecret(
  text: string,
  secrets: readonly string[],
): boolean {
  for (const secret of secrets) {
    if (secret.length < ANSWER_SECRET_MIN) continue;
    for (const form of secretForms(secret)) {
      if (form.length >= ANSWER_SECRET_MIN && text.includes(form)) return true;
    }
  }
  return false;
}

/**
 * Clips a text to `max` characters after hiding its secrets, so that no
 * secret is cut into a part that no longer matches.
 *
 * @param text The text.
 * @param secrets The values to hide.
 * @param max The most characters kept.
 * @param mark What ends a text that was clipped.
 * @returns The text, redacted and clipped.
 *
 * @example
 * ```ts
 * import { redactClipped } from "./template.ts";
 * const key = "sk-0123456789";
 * const shown = redactClipped(`${"x".repeat(495)}${key}`, [key], 500);
 * if (shown.includes("sk-01")) throw new Error(shown);
 * ```
 */
export function redactClipped(
  text: string,
  secrets: readonly string[],
  max = 500,
  mark = "…",
): string {
  // Only the head is shown: redact a head long enough to hold any form of a
  // secret that starts within it.
  const longest = secrets.reduce(
    (n, s) => Math.max(n, ...secretForms(s).map((f) => f.length)),
    0,
  );
  const t = redact(text.slice(0, max + longest + 1), secrets);
  return clip(t, max, mark);
}

/**
 * Such a parameter in a text and its value, up to the next `&`, `#` or
 * space; closing punctuation that ends the text around it (the `)` of a URL
 * in parentheses) is left out of the value.
 */
const CREDENTIAL_PARAM = new RegExp(
  `([?&](?:${CREDENTIAL_NAMES})=)([^&#\\s]*?)(?=[)\\]"'>.,;]*(?:[&#\\s]|$))`,
  "gi",
);

/**
 * A text with every credential of a URL's query in it (`?key=...`, see
 * {@linkcode urlSecrets}) written `***`, the parameter's name kept.
 *
 * @param text A URL, or a text with URLs in it.
 * @returns The text, each such value `***`.
 *
 * @example
 * ```ts
 * import { maskQueryCredentials } from "./template.ts";
 * const shown = maskQueryCredentials("https://h/v1?alt=sse&key=AIza-123");
 * if (shown !== "https://h/v1?alt=sse&key=***") throw new Error(shown);
 * ```
 */
export function maskQueryCredentials(text: string): string {
  return text.includes("=") ? text.replace(CREDENTIAL_PARAM, "$1***") : text;
}

/**
 * A URL, or a message holding URLs, as messages may show it: without the
 * user name and password of any URL in it, and each credential of a
 * query (`?key=...`) written `***`.
 *
 * @param text A URL, or a text with URLs in it.
 * @returns The text, each URL without its credentials.
 *
 * @example
 * ```ts
 * import { withoutCredentials } from "./template.ts";
 * const shown = withoutCredentials("error sending request for url (http://me:pw@127.0.0.1:8080/v1?key=k-1)");
 * if (shown !== "error sending request for url (http://127.0.0.1:8080/v1?key=***)") throw new Error(shown);
 * ```
 */
export function withoutCredentials(text: string): string {
  // Userinfo holds no "/", "?", "#" or "@" (they are percent-encoded).
  const shown = text.includes("@")
    ? text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1")
    : text;
  return maskQueryCredentials(shown);
}

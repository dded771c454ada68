/**
 * Templates over a case: `{{input}}`, `{{context}}`, `{{metadata.topic}}`,
 * any field, in prompt text and in JSON bodies.
 *
 * @module
 */

/** A placeholder that names a field the case does not have. */
export class TemplateError extends Error {
  /**
   * Creates the error.
   *
   * @param message What is missing.
   */
  constructor(message: string) {
    super(message);
    this.name = "TemplateError";
  }
}

const PLACEHOLDER = /\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;
const WHOLE = /^\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}$/;

function lookup(vars: Record<string, unknown>, path: string): unknown {
  let value: unknown = vars;
  for (const key of path.split(".")) {
    if (
      typeof value !== "object" || value === null || !Object.hasOwn(value, key)
    ) {
      throw new TemplateError(
        `The template names {{${path}}}, which this case does not have`,
      );
    }
    value = (value as Record<string, unknown>)[key];
  }
  return value;
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
): string {
  return template.replace(
    PLACEHOLDER,
    (_, path: string) => asText(lookup(vars, path)),
  );
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
    /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g,
    (_, name: string) => {
      const value = env(name);
      if (value === undefined) {
        throw new TemplateError(`The environment variable ${name} is not set`);
      }
      if (value !== "") secrets.push(value);
      return value;
    },
  );
  return { text: filled, secrets };
}

/**
 * Hides secret values in a text (an error message, a response body).
 *
 * @param text The text.
 * @param secrets The values to hide.
 * @returns The text with each secret replaced by `***`.
 */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4) out = out.split(secret).join("***");
  }
  return out;
}

/**
 * A URL, or a message holding URLs, as messages may show it: without the
 * user name and password of any URL in it.
 *
 * @param text A URL, or a text with URLs in it.
 * @returns The text, each URL without its userinfo.
 *
 * @example
 * ```ts
 * import { withoutUserinfo } from "./template.ts";
 * const shown = withoutUserinfo("error sending request for url (http://me:pw@127.0.0.1:8080/v1)");
 * if (shown !== "error sending request for url (http://127.0.0.1:8080/v1)") throw new Error(shown);
 * ```
 */
export function withoutUserinfo(text: string): string {
  // Userinfo holds no "/", "?", "#" or "@" (they are percent-encoded).
  return text.includes("@")
    ? text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]*@/gi, "$1")
    : text;
}

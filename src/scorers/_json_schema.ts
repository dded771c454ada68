// JSON Schema 2020-12 validation through Ajv, loaded only when a `json`
// scorer with a schema is built: a run without one never loads it.

/** A compiled schema: the first violations of a value, or none. */
export type SchemaCheck = (value: unknown) => string[];

/** How many violations a reason names. */
const SHOWN = 3;

/**
 * Compiles a JSON Schema (draft 2020-12).
 *
 * @throws {SyntaxError} When the schema is not a valid 2020-12 schema.
 */
export async function compileSchema(schema: unknown): Promise<SchemaCheck> {
  const { Ajv2020 } = await import("ajv/dist/2020");
  // `format` is an annotation in 2020-12 unless a vocabulary asks more;
  // `strict: false` accepts the keywords other tools add (`example`, ...).
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    validateFormats: false,
  });
  let validate: ReturnType<typeof ajv.compile>;
  try {
    validate = ajv.compile(schema as Record<string, unknown>);
  } catch (error) {
    throw new SyntaxError(
      `Invalid JSON Schema: ${
        error instanceof Error ? error.message : String(error)
      }`,
    );
  }
  return (value) => {
    if (validate(value)) return [];
    const errors = validate.errors ?? [];
    const out = errors.slice(0, SHOWN).map((e) => {
      const params = e.params as Record<string, unknown>;
      if (e.keyword === "required") {
        return `${
          jsonPath(e.instancePath, params.missingProperty)
        }: is required`;
      }
      if (e.keyword === "additionalProperties") {
        return `${
          jsonPath(e.instancePath, params.additionalProperty)
        }: is not allowed`;
      }
      return `${jsonPath(e.instancePath)}: ${e.message ?? e.keyword}`;
    });
    if (errors.length > SHOWN) out.push(`${errors.length - SHOWN} more`);
    return out;
  };
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** A JSON Pointer (`/items/0/name`) as a JSON path (`$.items[0].name`). */
export function jsonPath(pointer: string, last?: unknown): string {
  const keys = pointer === ""
    ? []
    : pointer.slice(1).split("/").map((k) =>
      k.replaceAll("~1", "/").replaceAll("~0", "~")
    );
  if (typeof last === "string") keys.push(last);
  let path = "$";
  for (const key of keys) {
    path += /^(0|[1-9][0-9]*)$/.test(key)
      ? `[${key}]`
      : IDENTIFIER.test(key)
      ? `.${key}`
      : `[${JSON.stringify(key)}]`;
  }
  return path;
}

/**
 * The JSON Schemas of evalglass's contract in `schemas/evalglass/`, compiled
 * with Ajv (draft 2020-12), for tests only.
 */

import { Ajv2020 } from "ajv/dist/2020.js";

const DIR = new URL("../../schemas/evalglass/", import.meta.url);
const NAMES = ["diagnostic", "score", "score_batch", "runrecord"] as const;

/** A compiled schema: whether a value satisfies it, and why not. */
export interface Check {
  (value: unknown): boolean;
  errors?: unknown[] | null;
}

const ajv = new Ajv2020({
  allErrors: true,
  strict: true,
  allowUnionTypes: true,
});
for (const name of NAMES) {
  ajv.addSchema(
    JSON.parse(await Deno.readTextFile(new URL(`${name}.schema.json`, DIR))),
  );
}

/** The validator of `schemas/evalglass/<name>.schema.json`. */
export function schema(name: (typeof NAMES)[number]): Check {
  const check = ajv.getSchema(`urn:evalpipe:schema:evalglass:${name}`);
  if (check === undefined) throw new Error(`no schema ${name}`);
  return check as Check;
}

/** Throws with Ajv's errors unless `value` satisfies the schema `name`. */
export function assertSchema(
  name: (typeof NAMES)[number],
  value: unknown,
  what = "value",
): void {
  const check = schema(name);
  if (!check(value)) {
    throw new Error(
      `${what} does not satisfy ${name}.schema.json: ${
        JSON.stringify(check.errors, null, 2)
      }\n${JSON.stringify(value)}`,
    );
  }
}

import assert from "node:assert/strict";
import { checkConfigText, ConfigError } from "../../src/config/mod.ts";
import { parseConfigText } from "../../src/config/schema.ts";

/** The ConfigError both ways of checking a config throw for `text` (they must agree). */
export async function configError(text: string): Promise<ConfigError> {
  let expected: unknown;
  try {
    parseConfigText(text, "suite.yaml");
  } catch (error) {
    expected = error;
  }
  assert.ok(expected instanceof ConfigError, String(expected));
  let actual: unknown;
  try {
    await checkConfigText(text, "suite.yaml");
  } catch (error) {
    actual = error;
  }
  assert.ok(actual instanceof ConfigError, String(actual));
  assert.equal(actual.message, expected.message);
  assert.equal(actual.line, expected.line);
  return actual;
}

// The fields of a unit an `llm_judge` rubric and system prompt may name. The
// judge fills its templates with them (llm_judge.ts), and the config checks
// their placeholders against them (config/_templates.ts), so that a typo is a
// config error at its line rather than an error Score for every case.

/**
 * The fields a rubric may name: the unit's `input`, `output`, `expected`,
 * `context` and `metadata` (`{{metadata.topic}}`, a field of it).
 */
export const RUBRIC_FIELDS: readonly string[] = [
  "input",
  "output",
  "expected",
  "context",
  "metadata",
];

/**
 * Of them, those a placeholder may name a part of (`{{metadata.topic}}`,
 * `{{context.0}}`); the others reach the judge as text.
 */
export const RUBRIC_TREES: readonly string[] = ["context", "metadata"];

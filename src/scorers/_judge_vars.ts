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

/**
 * An `llm_judge`'s templates by config key, and what its errors call them:
 * a case one cannot fill is an error naming it ("The system prompt names
 * {{metadata.topic}}, ..."), and `validate` names the key.
 */
export const JUDGE_TEMPLATES = {
  rubric: "rubric",
  system: "system prompt",
} as const;

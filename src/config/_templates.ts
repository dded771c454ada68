/**
 * What an `llm_judge` rubric and system prompt may hold, checked before any
 * call: syntax evalpipe fills (as a target's templates,
 * net/_settings_checks.ts), naming only the fields a judge is given. A
 * prompt no case could fill would make every Score an error.
 *
 * @module
 */

import { RUBRIC_FIELDS, RUBRIC_TREES } from "../scorers/_judge_vars.ts";
import { nearest } from "../base/words.ts";
import {
  firstProblem,
  type SettingsProblem,
  type TextCheck,
  unfilled,
} from "../net/_settings_checks.ts";

/** Every placeholder evalpipe fills, and the field's path it names. */
const PLACEHOLDERS = /\{\{\s*([A-Za-z_][\w-]*(?:\.[\w-]+)*)\s*\}\}/g;

/**
 * A placeholder naming a field a judge is never given (`{{inptu}}`, or a
 * part of a text, `{{input.0}}`): no case could fill it, so every Score
 * would be an error. A field of `metadata` is the case's to have or lack.
 *
 * @param prompt What the template is, for the message (`a rubric`).
 */
const notJudgeField = (prompt: string): TextCheck => (text) => {
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
        : `${prompt} names ${
          RUBRIC_FIELDS.map((f) => `{{${f}}}`).join(", ")
        } or a field of metadata, {{metadata.NAME}}`
    }`;
  }
  return undefined;
};

/** Each template of an `llm_judge`, and what its messages call it. */
const JUDGE_TEMPLATES = [
  ["rubric", notJudgeField("a rubric")],
  ["system", notJudgeField("a system prompt")],
] as const;

/**
 * The first problem of an `llm_judge`'s `rubric` and `system`, templates
 * over the unit: syntax evalpipe does not fill, then a field a judge is
 * never given.
 *
 * @param scorer A scorer's config.
 * @param at Its path in the config.
 * @returns The problem, or `undefined`.
 */
export function rubricTemplateProblem(
  scorer: unknown,
  at: readonly PropertyKey[],
): SettingsProblem | undefined {
  if (
    typeof scorer !== "object" || scorer === null ||
    (scorer as { type?: unknown }).type !== "llm_judge"
  ) return undefined;
  const settings = scorer as Record<string, unknown>;
  for (const [key, notField] of JUDGE_TEMPLATES) {
    const problem = firstProblem(settings, at, [key], unfilled) ??
      firstProblem(settings, at, [key], notField);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

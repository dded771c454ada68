/**
 * The validation stage: every Score that crosses a boundary obeys the Score
 * rules, or becomes an `error` Score that says why.
 *
 * @module
 */

import { errored } from "./make.ts";
import { isCanonicalScore, parseScore } from "./rules.ts";
import { type Score, ScoreSyntaxError } from "./types.ts";

function field(candidate: unknown, key: string): string | undefined {
  if (typeof candidate !== "object" || candidate === null) return undefined;
  const value = (candidate as Record<string, unknown>)[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Validates one candidate Score. A violation becomes an `error` Score whose
 * reason and diagnostic name the broken rule, keeping whatever metric,
 * version and identity the candidate carried.
 *
 * @param candidate Anything claiming to be a Score.
 * @returns A valid Score.
 *
 * @example A NaN value never becomes a number
 * ```ts
 * import { validateScore } from "./validate.ts";
 * const s = validateScore({ metric: "m", status: "scored", validity: "valid", value: NaN,
 *   passed: false, evaluator_version: "m@1", diagnostics: [], evidence_refs: [] });
 * if (s.status !== "error" || s.value !== null) throw new Error("unexpected");
 * ```
 */
export function validateScore(candidate: unknown): Score {
  try {
    return parseScore(candidate);
  } catch (error) {
    if (!(error instanceof ScoreSyntaxError)) throw error;
    const exampleId = field(candidate, "example_id");
    const unitId = field(candidate, "unit_id");
    return errored(
      field(candidate, "metric") ?? "unknown",
      `invalid Score: ${error.message}`,
      {
        code: "scorer.invalid_score",
        evaluator_version: field(candidate, "evaluator_version") ?? "unknown",
        ...(exampleId !== undefined ? { example_id: exampleId } : {}),
        ...(unitId !== undefined ? { unit_id: unitId } : {}),
      },
    );
  }
}

/**
 * What the stages pass on: a candidate that already is a Score in canonical
 * form as it is (the Scores of `scoreUnits` are), anything else as
 * {@linkcode validateScore} makes it.
 */
function checked(candidate: unknown): Score {
  return isCanonicalScore(candidate) ? candidate : validateScore(candidate);
}

/**
 * A stage that validates every Score passing through (see
 * {@linkcode validateScore}): it never errors and never emits a Score that
 * breaks the rules. A candidate that already is a valid Score in canonical
 * form passes as it is, without a copy. {@linkcode validateScoreBatches} is
 * the same stage over batches.
 *
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { validateScores } from "./validate.ts";
 * const out = await Array.fromAsync(
 *   ReadableStream.from([{ metric: "m", status: "error", value: 0 }]).pipeThrough(validateScores()),
 * );
 * if (out[0]?.value !== null) throw new Error("a 0.0 slipped through");
 * ```
 */
export function validateScores(): TransformStream<unknown, Score> {
  return new TransformStream({
    transform(candidate, controller) {
      controller.enqueue(checked(candidate));
    },
  });
}

/**
 * {@linkcode validateScores} over batches, as
 * {@linkcode import("../scorers/mod.ts").scoreUnitBatches} emits them: each
 * batch leaves as one array of valid Scores, in order. This is the stage
 * `run` uses.
 *
 * @returns The stage.
 *
 * @example
 * ```ts
 * import { validateScoreBatches } from "./validate.ts";
 * import { scored } from "./make.ts";
 * const [batch] = await Array.fromAsync(
 *   ReadableStream.from([[scored("m", 1), { metric: "m", status: "scored", value: NaN }]])
 *     .pipeThrough(validateScoreBatches()),
 * );
 * if (batch?.map((s) => s.status).join() !== "scored,error") throw new Error();
 * ```
 */
export function validateScoreBatches(): TransformStream<
  readonly unknown[],
  Score[]
> {
  return new TransformStream({
    transform(batch, controller) {
      let i = 0;
      while (i < batch.length && isCanonicalScore(batch[i])) i++;
      // All of them as they were: the batch itself goes on.
      let out = batch as Score[];
      if (i < batch.length) {
        out = batch.slice(0, i) as Score[];
        for (; i < batch.length; i++) out.push(checked(batch[i]));
      }
      controller.enqueue(out);
    },
  });
}

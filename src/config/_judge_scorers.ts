// Building the RAG and quality judges a config names: the judge module is
// loaded only then, and a `rubric` judge's file is read now, relative to the
// config file's folder, so that a missing one is a config error at its line.

import type { Scorer } from "../scorers/scorer.ts";
import type { ChatClientOptions } from "../net/chat_client.ts";
import { osErrorText } from "../base/errors.ts";
import { readUtf8File } from "../io/utf8.ts";
import { ScorerOptionError } from "./_builtin_scorers.ts";
import type {
  GenerationKeys,
  JudgeScorerConfig,
  RubricScorerConfig,
} from "./types.ts";

/** A judge's config with its generation keys moved into `params`, per type. */
type Prepared<T> = T extends unknown
  ? Omit<T, keyof GenerationKeys | "params"> & {
    params?: Record<string, unknown> | undefined;
  }
  : never;

const JUDGES = new Set([
  "faithfulness",
  "answer_relevance",
  "context_precision",
  "context_recall",
  "correctness",
  "rubric",
]);

/**
 * Whether a scorer config is a RAG or quality judge's.
 *
 * @param config A scorer's config.
 * @returns Whether its type is one of the judges'.
 */
export function isJudge(
  config: { type: string },
): config is JudgeScorerConfig | RubricScorerConfig {
  return JUDGES.has(config.type);
}

/**
 * Builds a judge from its config, generation keys already moved into
 * `params`.
 *
 * @param config The judge's config.
 * @param where How the config names the scorer, e.g. `scorers[2]`.
 * @param cwd The config file's folder.
 * @returns The scorer.
 * @throws {ScorerOptionError} When the rubric file cannot be read or is
 *   empty, or the scale is not low below high.
 */
export async function buildJudge(
  config: Prepared<JudgeScorerConfig | RubricScorerConfig>,
  where: string,
  cwd: string,
  options: ChatClientOptions = {},
): Promise<Scorer> {
  const judges = await import("../scorers/rag_judges.ts");
  if (config.type !== "rubric") {
    const { type, ...settings } = config;
    const make = {
      faithfulness: judges.faithfulnessJudge,
      answer_relevance: judges.answerRelevanceJudge,
      context_precision: judges.contextPrecisionJudge,
      context_recall: judges.contextRecallJudge,
      correctness: judges.correctnessJudge,
    }[type];
    return make(settings, undefined, options);
  }
  const { type: _type, file, scale, ...settings } = config;
  if (scale !== undefined && scale.length !== 2) {
    throw new ScorerOptionError(
      "scale",
      `"${where}.scale" must be two numbers, [low, high], not ${
        JSON.stringify(scale)
      }`,
    );
  }
  const path = file.startsWith("/") ? file : `${cwd}/${file}`;
  let rubric: string;
  try {
    rubric = await readUtf8File(path);
  } catch (error) {
    throw new ScorerOptionError(
      "file",
      `"${where}.file": cannot read the rubric ${JSON.stringify(file)}: ${
        osErrorText(error)
      }`,
    );
  }
  if (rubric.trim() === "") {
    throw new ScorerOptionError(
      "file",
      `"${where}.file": the rubric ${JSON.stringify(file)} is empty`,
    );
  }
  try {
    return judges.rubricJudge(
      {
        ...settings,
        rubric,
        ...(scale !== undefined ? { scale: [scale[0]!, scale[1]!] } : {}),
      },
      undefined,
      options,
    );
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new ScorerOptionError("scale", `"${where}.scale": ${error.message}`);
  }
}

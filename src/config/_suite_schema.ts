/**
 * The zod schema of a suite config: the reference a config is judged by.
 * Only `config_schema.ts` and the tests import it, so a run whose config is
 * valid never loads zod.
 *
 * @module
 */

import { z } from "zod";
import type { SuiteConfig } from "./types.ts";

const seconds = z.number().positive().max(86_400);

const network = {
  timeout: seconds.optional(),
  retries: z.number().int().min(0).max(100).optional(),
  rate_limit: z.number().positive().optional(),
  max_total_retries: z.number().int().min(0).optional(),
  retry_delay: z.number().min(0).max(600).optional(),
};

const generation = {
  params: z.record(z.string(), z.unknown()).optional(),
  temperature: z.number().optional(),
  max_tokens: z.number().int().positive().optional(),
  seed: z.number().int().optional(),
  top_p: z.number().optional(),
  stop: z.union([z.string(), z.array(z.string())]).optional(),
};

const chat = {
  base_url: z.url().optional(),
  model: z.string().min(1),
  api_key_env: z.string().regex(
    /^[A-Za-z_][A-Za-z0-9_]*$/,
    "must be an environment variable's name",
  )
    .optional(),
  ...generation,
  ...network,
};

const TargetSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("openai"),
    ...chat,
    system: z.string().optional(),
    prompt: z.string().optional(),
  }),
  z.strictObject({
    type: z.literal("http"),
    url: z.string().min(1),
    method: z.enum([
      "GET",
      "POST",
      "PUT",
      "PATCH",
      "get",
      "post",
      "put",
      "patch",
    ]).optional(),
    headers: z.record(z.string(), z.string()).optional(),
    body: z.unknown().optional(),
    output: z.string().optional(),
    ...network,
  }),
  z.strictObject({
    type: z.literal("subprocess"),
    cmd: z.string().min(1),
    timeout: seconds.optional(),
  }),
  z.strictObject({ type: z.literal("replay") }),
]);

const ScorerSchema = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("subprocess"),
    cmd: z.string().min(1),
    name: z.string().min(1).optional(),
    timeout: seconds.optional(),
    max_output_bytes: z.number().int().positive().optional(),
    persistent: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.enum(["exact_match", "contains"]),
    name: z.string().min(1).optional(),
    ignore_case: z.boolean().optional(),
  }),
  z.strictObject({
    type: z.literal("llm_judge"),
    name: z.string().min(1).optional(),
    rubric: z.string().min(1).optional(),
    system: z.string().min(1).optional(),
    pass_threshold: z.number().optional(),
    ...chat,
  }),
]);

/** A suite config as `config.ts` types it; `_config_check.ts` mirrors it. */
export const SuiteSchema: z.ZodType<SuiteConfig> = z.strictObject({
  dataset: z.string().min(1),
  target: TargetSchema,
  scorers: z.array(ScorerSchema).min(1),
  concurrency: z.number().int().min(1).max(1024).optional(),
  epochs: z.number().int().min(1).max(1000).optional(),
  max_processes: z.number().int().min(1).max(4096).optional(),
  timeout: seconds.optional(),
  gates: z.record(
    z.string(),
    z.strictObject({
      min_mean: z.number().optional(),
      min_mean_lower_bound: z.number().optional(),
      min_pass_rate: z.number().min(0).max(1).optional(),
      min_coverage: z.number().min(0).max(1).optional(),
      max_errors: z.number().int().min(0).optional(),
    }),
  ).optional(),
}) as z.ZodType<SuiteConfig>;

/**
 * The shape of a suite config, written once as data: which keys each mapping
 * takes, their types and ranges. Two things are derived from it: the fast
 * check a valid config passes (`_check.ts`, no zod) and the zod schema that
 * names the first problem of an invalid one (`_suite_schema.ts`, loaded only
 * then).
 *
 * @module
 */

/** A value's shape. Each kind says what zod it stands for. */
export type Shape =
  /** `z.string()`, `.min(1)`, `.regex(pattern, message)`. */
  | { kind: "string"; min?: 1; pattern?: RegExp; message?: string }
  /** `z.url()`. */
  | { kind: "url" }
  /** `z.number()`, then `.int()`, `.positive()`, `.min()`, `.max()` in that order. */
  | {
    kind: "number";
    int?: true;
    positive?: true;
    min?: number;
    max?: number;
  }
  /** `z.boolean()`. */
  | { kind: "boolean" }
  /** `z.unknown()`: any value, as it is. */
  | { kind: "unknown" }
  /** `z.enum(values)`. */
  | { kind: "enum"; values: readonly string[] }
  /** `z.array(of).min(min)`. */
  | { kind: "list"; of: Shape; min?: number }
  /** `z.record(z.string(), of)`. */
  | { kind: "record"; of: Shape }
  /** `z.strictObject(fields)`: these keys and no others. */
  | { kind: "mapping"; fields: Readonly<Record<string, Field>> }
  /** `z.union(of)`: the first that fits. */
  | { kind: "union"; of: readonly Shape[] }
  /**
   * `z.discriminatedUnion("type", ...)`: a mapping whose `type` (its first
   * key, added here) picks its fields. Types that share one mapping share one
   * option (`type: z.enum([...])`).
   */
  | {
    kind: "byType";
    types: Readonly<Record<string, Shape & { kind: "mapping" }>>;
  };

/** A key of a mapping: its shape, and whether it may be absent. */
export interface Field {
  /** The value's shape. */
  shape: Shape;
  /** Whether the key may be absent. */
  optional: boolean;
}

const required = (shape: Shape): Field => ({ shape, optional: false });
const optional = (shape: Shape): Field => ({ shape, optional: true });
const mapping = (
  fields: Record<string, Field>,
): Shape & { kind: "mapping" } => ({ kind: "mapping", fields });
const number = (
  range: Omit<Shape & { kind: "number" }, "kind"> = {},
): Shape => ({ kind: "number", ...range });
const text: Shape = { kind: "string" };
const someText: Shape = { kind: "string", min: 1 };
const boolean: Shape = { kind: "boolean" };
const anything: Shape = { kind: "unknown" };

const seconds = number({ positive: true, max: 86_400 });
const epochCount = number({ int: true, min: 1, max: 1000 });

const network = {
  timeout: optional(seconds),
  retries: optional(number({ int: true, min: 0, max: 100 })),
  rate_limit: optional(number({ positive: true })),
  max_total_retries: optional(number({ int: true, min: 0 })),
  retry_delay: optional(number({ min: 0, max: 600 })),
  max_redirects: optional(number({ int: true, min: 0, max: 20 })),
  max_response_bytes: optional(number({ int: true, positive: true })),
};

const generation = {
  params: optional({ kind: "record", of: anything }),
  temperature: optional(number()),
  max_tokens: optional(number({ int: true, positive: true })),
  seed: optional(number({ int: true })),
  top_p: optional(number()),
  stop: optional({ kind: "union", of: [text, { kind: "list", of: text }] }),
};

const price = number({ min: 0 });
// Prices of a chat reply's tokens and of a trace's spans alike: both may
// report tokens read from and written to a provider's prompt cache.
const tokenPrices = {
  input_per_1m: required(price),
  output_per_1m: required(price),
  cached_input_per_1m: optional(price),
  cache_write_per_1m: optional(price),
  cache_write_1h_per_1m: optional(price),
};

const chat = {
  base_url: optional({ kind: "url" }),
  cost: optional(mapping(tokenPrices)),
  model: required(someText),
  api_key_env: optional({
    kind: "string",
    pattern: /^[A-Za-z_][A-Za-z0-9_]*$/,
    message: "must be an environment variable's name",
  }),
  headers: optional({ kind: "record", of: text }),
  ...generation,
  ...network,
};

const target: Shape = {
  kind: "byType",
  types: {
    openai: mapping({
      ...chat,
      system: optional(text),
      prompt: optional(text),
    }),
    http: mapping({
      url: required(someText),
      method: optional({
        kind: "enum",
        values: ["GET", "POST", "PUT", "PATCH", "get", "post", "put", "patch"],
      }),
      headers: optional({ kind: "record", of: text }),
      body: optional(anything),
      output: optional(text),
      ...network,
    }),
    subprocess: mapping({
      cmd: required(someText),
      timeout: optional(seconds),
      max_output_bytes: optional(number({ int: true, positive: true })),
      stdin: optional({ kind: "enum", values: ["json", "text"] }),
    }),
    replay: mapping({}),
    // Prices for the token usage a trace's spans record (EvalCore's key).
    trace: mapping({ cost: optional(mapping(tokenPrices)) }),
  },
};

const texts: Shape = { kind: "list", of: text, min: 1 };
const someTexts: Shape = { kind: "list", of: someText, min: 1 };
const share = number({ min: 0, max: 1 });
const limit = number({ min: 0 });
const named = { name: optional(someText) };

// How the scorers that compare texts read them: case folded, in a Unicode
// normalization form.
const cased = {
  ignore_case: optional(boolean),
  normalize: optional({ kind: "enum", values: ["nfc", "nfkc"] }),
};
// The text scorers: texts of their own (`value`, `values`) or `expected`.
const textual = {
  ...named,
  ...cased,
  value: optional(text),
  values: optional(texts),
};
// A mapping each: types that shared one would be listed together in a
// message naming the types, out of their order here.
const builtin = () => mapping(textual);
const similar = () => mapping({ ...named, threshold: optional(share) });
const similarCased = () =>
  mapping({ ...named, threshold: optional(share), ...cased });

const judged = () => mapping({ ...named, threshold: optional(share), ...chat });

const scorer: Shape = {
  kind: "byType",
  types: {
    subprocess: mapping({
      cmd: required(someText),
      name: optional(someText),
      timeout: optional(seconds),
      max_output_bytes: optional(number({ int: true, positive: true })),
      persistent: optional(boolean),
    }),
    exact_match: builtin(),
    contains: mapping({
      ...textual,
      mode: optional({ kind: "enum", values: ["any", "all"] }),
    }),
    not_contains: builtin(),
    starts_with: builtin(),
    regex: mapping({
      ...named,
      pattern: required(text),
      flags: optional({
        kind: "string",
        pattern: /^(?!.*(.).*\1)[imsuv]*$/,
        message: 'must be letters of "imsuv", each at most once',
      }),
      match: optional(boolean),
    }),
    word_count: mapping({
      ...named,
      min: optional(number({ int: true, min: 0 })),
      max: optional(number({ int: true, min: 0 })),
    }),
    one_of: mapping({
      ...named,
      labels: required(texts),
      ...cased,
    }),
    json: mapping({
      ...named,
      schema: optional({
        kind: "union",
        of: [someText, { kind: "record", of: anything }, boolean],
      }),
    }),
    fields: mapping({ ...named, required: required(someTexts) }),
    json_match: mapping({ ...named, ignore: optional(someTexts) }),
    numeric: mapping({
      ...named,
      abs_tol: optional(limit),
      rel_tol: optional(limit),
    }),
    levenshtein: similarCased(),
    token_f1: similar(),
    rouge_l: similar(),
    bleu: similarCased(),
    set_overlap: mapping({
      ...named,
      measure: optional({ kind: "enum", values: ["jaccard", "f1"] }),
      ...cased,
      threshold: optional(share),
    }),
    latency: mapping({ ...named, max_ms: required(limit) }),
    cost: mapping({ ...named, max_usd: required(limit) }),
    // Each rule is read by the scorer, which names the rule and key at fault.
    trajectory: mapping({
      ...named,
      rules: required({
        kind: "list",
        of: { kind: "record", of: anything },
        min: 1,
      }),
    }),
    tool_call_f1: mapping({
      ...named,
      arguments: optional(boolean),
      calls: optional({ kind: "list", of: anything }),
      threshold: optional(share),
    }),
    llm_judge: mapping({
      name: optional(someText),
      rubric: optional(someText),
      system: optional(someText),
      pass_threshold: optional(number()),
      ...chat,
    }),
    // The RAG and quality judges (src/scorers/rag_judges.ts).
    faithfulness: judged(),
    answer_relevance: judged(),
    context_precision: judged(),
    context_recall: judged(),
    correctness: judged(),
    rubric: mapping({
      ...named,
      threshold: optional(share),
      file: required(someText),
      scale: optional({ kind: "list", of: number(), min: 2 }),
      ...chat,
    }),
    semantic_similarity: mapping({
      name: optional(someText),
      threshold: optional(share),
      base_url: optional({ kind: "url" }),
      model: required(someText),
      api_key_env: chat.api_key_env,
      headers: chat.headers,
      ...network,
    }),
  },
};

/** A suite config, as `types.ts` types it. */
export const SUITE: Shape = mapping({
  dataset: required(someText),
  // Exactly one of `target` and `targets` (checked after the shape, in
  // `_check.ts`, where the message can say so); `matrix` names targets.
  target: optional(target),
  targets: optional({ kind: "record", of: target }),
  matrix: optional({ kind: "list", of: someText, min: 1 }),
  scorers: required({ kind: "list", of: scorer, min: 1 }),
  concurrency: optional(number({ int: true, min: 1, max: 1024 })),
  // `epochs: 5`, or `epochs: { n: 5, require: majority }`.
  epochs: optional({
    kind: "union",
    of: [
      epochCount,
      mapping({
        n: required(epochCount),
        require: optional({
          kind: "enum",
          values: ["all", "majority", "any"],
        }),
      }),
    ],
  }),
  max_processes: optional(number({ int: true, min: 1, max: 4096 })),
  timeout: optional(seconds),
  cache: optional({ kind: "enum", values: ["auto", "replay", "live", "off"] }),
  budget_usd: optional(number({ positive: true })),
  gates: optional({
    kind: "record",
    of: mapping({
      // Every scorer a config can name scores in 0..1: a bar above 1 can
      // never be met, and is a slip (a percentage, say).
      min_mean: optional(share),
      min_mean_lower_bound: optional(number({ max: 1 })),
      min_pass_rate: optional(share),
      min_coverage: optional(share),
      max_errors: optional(number({ int: true, min: 0 })),
      max_blocked: optional(number({ int: true, min: 0 })),
      allow_unmeasured: optional(boolean),
      // A classification metric's figures (`classification:` below).
      min_accuracy: optional(share),
      min_macro_f1: optional(share),
    }),
  }),
  // Each unit one prediction: the output's label against `expected`.
  classification: optional({
    kind: "union",
    of: [boolean, mapping({ field: optional(someText) })],
  }),
});

/**
 * A suite config with `datasets:` (a list of files, each with an optional
 * name) instead of `dataset:`: the shape a config with that key is checked
 * against. One with `dataset` too is refused in `_datasets.ts`.
 */
export const SUITE_LISTED: Shape = (() => {
  const { dataset: _one, ...rest } = (SUITE as Shape & { kind: "mapping" })
    .fields;
  return mapping({
    dataset: optional(someText),
    datasets: required({
      kind: "list",
      of: mapping({ path: required(someText), name: optional(someText) }),
      min: 1,
    }),
    ...rest,
  });
})();

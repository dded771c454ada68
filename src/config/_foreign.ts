/**
 * Suites of other tools, told apart when evalpipe cannot read them as its
 * own: an EvalCore `evals.yaml` (a cousin of evalpipe's config, with other
 * words for several keys) or a promptfoo config. The first problem's message
 * then says what evalpipe calls the thing at fault, rather than only that
 * the key is unknown. Loaded with `schema.ts`, for an invalid config only.
 *
 * @module
 */

function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a config has a word only an EvalCore suite uses. */
function isEvalCore(root: Record<string, unknown>): boolean {
  if (isMapping(root.run)) return true;
  if (
    Array.isArray(root.datasets) &&
    root.datasets.some((d) => isMapping(d) && Object.hasOwn(d, "file"))
  ) return true;
  // evalpipe's gates are a mapping by metric; EvalCore's, a list by type.
  if (
    Array.isArray(root.gates) &&
    root.gates.some((g) => isMapping(g) && typeof g.type === "string")
  ) return true;
  const targets = isMapping(root.targets) ? Object.values(root.targets) : [];
  if (
    targets.some((t) =>
      isMapping(t) && (t.type === "shell" || t.type === "openai-compatible")
    )
  ) return true;
  const scorers = Array.isArray(root.scorers) ? root.scorers : [];
  return scorers.some((s) =>
    isMapping(s) && typeof s.type === "string" &&
    Object.hasOwn(EVALCORE_SCORERS, s.type)
  );
}

/** EvalCore's target types, in evalpipe's words. */
const EVALCORE_TARGETS: Record<string, string> = {
  shell:
    'EvalCore\'s "shell" target is "subprocess" here, with "stdin: text" so that its command reads the input text alone on stdin, as under EvalCore (without it, the case as JSON, {"input": …})',
  "openai-compatible":
    'EvalCore\'s "openai-compatible" target is "openai" here, with "base_url" for its "url"',
};

/** EvalCore's scorer types, in evalpipe's words. */
const EVALCORE_SCORERS: Record<string, string> = {
  exact: 'EvalCore\'s "exact" scorer is "exact_match" here',
  judge:
    'EvalCore\'s "judge" scorer is "llm_judge" here, with "base_url" for its "url" and "pass_threshold" for its "threshold"',
  "json-schema": 'EvalCore\'s "json-schema" scorer is "json" here',
  similarity:
    'EvalCore\'s "similarity" scorer is "semantic_similarity" here, with "base_url" for its "url"',
};

/** EvalCore's keys, in evalpipe's words. */
const EVALCORE_KEYS: Record<string, string> = {
  file: 'a dataset\'s "file" is its "path" here',
  run:
    'EvalCore\'s "run:" keys stand at the top here: "concurrency", "budget_usd", "matrix" and "classification" as they are, "trials" is "epochs", and "gates" is a mapping by metric ({ contains: { min_pass_rate: 0.95 } })',
  gates:
    'EvalCore\'s list of gates is a mapping by metric here: { type: pass_rate, min: 0.95 } is a gate on each metric, { contains: { min_pass_rate: 0.95 } } (EvalCore\'s counts the cases that pass every scorer), { type: mean_score, scorer: judge, min: 0.8 } is { judge: { min_mean: 0.8 } }, and "accuracy" and "macro_f1" are { classification: { min_accuracy: 0.8, min_macro_f1: 0.7 } }',
  case_sensitive: '"case_sensitive: false" is "ignore_case: true" here',
  max_retries: '"max_retries" is "retries" here',
  timeout_seconds: '"timeout_seconds" is "timeout" here',
  response_path:
    'EvalCore\'s "response_path" (a JSON Pointer, /answer) is "output" here (a dot path, answer)',
  auth_header:
    'a key is sent by a header here: headers: { authorization: "Bearer ${KEY}" }',
  auth_prefix:
    'a key is sent by a header here: headers: { authorization: "Bearer ${KEY}" }',
  url: 'a model\'s "url" is its "base_url" here',
  threshold: 'a judge\'s "threshold" is its "pass_threshold" here',
  history: "evalpipe keeps no run history: --record FILE keeps a run",
};

const EVALCORE_README =
  'the README\'s "Coming from EvalCore or promptfoo" lists every word that differs';

/**
 * What evalpipe calls what another tool's suite has at the path of the
 * config's first problem, or `undefined` when the config is no other tool's.
 *
 * @param root The config as parsed.
 * @param path The path of the first problem.
 * @param value What the config holds at `path`.
 * @returns A sentence to add to the problem's message.
 */
export function foreignHint(
  root: unknown,
  path: readonly PropertyKey[],
  value: unknown,
): string | undefined {
  if (!isMapping(root)) return undefined;
  if (
    Object.hasOwn(root, "prompts") &&
    (Object.hasOwn(root, "providers") || Object.hasOwn(root, "tests"))
  ) {
    return 'this is a promptfoo config: an evalpipe suite has a "dataset" (the tests\' vars, one JSON case per line), a "target" (the provider with its prompt) and "scorers" (the asserts); the README\'s "Coming from EvalCore or promptfoo" shows how each maps';
  }
  if (!isEvalCore(root)) return undefined;
  const key = String(path.at(-1) ?? "");
  // A type is named at its key, or at the scorer or target it is of.
  const type = key === "type" && typeof value === "string"
    ? value
    : isMapping(value) && typeof value.type === "string"
    ? value.type
    : undefined;
  const types = path[0] === "scorers" ? EVALCORE_SCORERS : EVALCORE_TARGETS;
  const word = type !== undefined && Object.hasOwn(types, type)
    ? types[type]
    : Object.hasOwn(EVALCORE_KEYS, key)
    ? EVALCORE_KEYS[key]
    : undefined;
  return `this is an EvalCore suite: ${
    word !== undefined ? `${word}; ` : ""
  }${EVALCORE_README}`;
}

/**
 * Validating a suite config with its zod schema, synchronously, naming the
 * file, line and key of the first problem. `checkConfigText` in `config.ts`
 * is the faster way in: it loads this module (and zod) only for a config it
 * cannot accept itself.
 *
 * @module
 */

import type { z } from "zod";
import {
  checkBudget,
  checkScorers,
  checkTargets,
  ConfigError,
  fitsShape,
  isExtensionKey,
  listsDatasets,
  locateConfig,
} from "./_check.ts";
import { pathText } from "../base/place.ts";
import { checkDatasets } from "./_datasets.ts";
import { foreignHint } from "./_foreign.ts";
import { editDistance, nearest } from "../base/words.ts";
import { nonFiniteWord } from "../io/yaml.ts";
import { scriptName } from "../process/command.ts";
import { SuiteListedSchema, SuiteSchema } from "./_suite_schema.ts";
import { type Shape, SUITE, SUITE_LISTED } from "./_shape.ts";
import * as trajectoryChecks from "../scorers/trajectory.ts";
import type { SuiteConfig } from "./types.ts";

function typeName(value: unknown): string {
  if (value === undefined) return "nothing";
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  // YAML's .inf and .nan, which JSON would write as null.
  const word = typeof value === "number" ? nonFiniteWord(value) : undefined;
  if (word !== undefined) return `number ${word}`;
  return typeof value === "object"
    ? "a mapping"
    : `${typeof value} ${JSON.stringify(value)}`;
}

/**
 * The type a union's branch wants, when the value is not of it (the
 * branch's first problem is the value's own type); otherwise `undefined`.
 */
function branchType(
  issues: readonly z.core.$ZodIssue[],
): string | undefined {
  const first = issues[0];
  return first?.code === "invalid_type" && first.path.length === 0
    ? first.expected
    : undefined;
}

/** A type zod expected, in the words of a config's reader. */
function kindName(expected: string): string {
  switch (expected) {
    case "object":
    case "record":
      return "a mapping";
    case "array":
      return "a list";
    case "int":
      return "a whole number";
    default:
      return `a ${expected}`;
  }
}

/** YAML 1.1's words for true and false, which YAML 1.2 reads as text. */
const YAML_11_BOOLEANS = /^(?:y|yes|n|no|on|off)$/i;

/**
 * A hint for a boolean written as YAML 1.1 (PyYAML, so evalglass) wrote it:
 * `yes` is a boolean there and text here, which the bare message would not
 * explain.
 */
function yaml11Hint(expected: string, actual: unknown): string {
  if (
    expected !== "boolean" || typeof actual !== "string" ||
    !YAML_11_BOOLEANS.test(actual)
  ) return "";
  const word = /^(?:y|yes|on)$/i.test(actual) ? "true" : "false";
  return ` (evalpipe reads YAML 1.2, where ${actual} is text: write ${word})`;
}

function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v: unknown = root;
  for (const key of path) {
    v = (v as Record<PropertyKey, unknown> | null | undefined)?.[key];
  }
  return v;
}

/** Whether a value is a mapping (not a list, not null). */
function isMapping(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The mapping a shape takes for a value: a union's by the value's kind, a type's by its `type`. */
function mappingOf(
  shape: Shape | undefined,
  value: unknown,
): (Shape & { kind: "mapping" }) | undefined {
  if (shape === undefined || !isMapping(value)) return undefined;
  switch (shape.kind) {
    case "mapping":
      return shape;
    case "byType": {
      const type = value.type;
      if (typeof type !== "string" || !Object.hasOwn(shape.types, type)) {
        return undefined;
      }
      const fields = shape.types[type]!.fields;
      // `type` is a key of each type's mapping too.
      return {
        kind: "mapping",
        fields: {
          type: { shape: { kind: "string" }, optional: false },
          ...fields,
        },
      };
    }
    case "union":
      for (const option of shape.of) {
        const found = mappingOf(option, value);
        if (found !== undefined) return found;
      }
      return undefined;
    default:
      return undefined;
  }
}

/** The shape at a path of the config, following the value where the shape branches. */
function shapeAt(
  root: unknown,
  path: readonly PropertyKey[],
): Shape | undefined {
  let shape: Shape | undefined = listsDatasets(root) ? SUITE_LISTED : SUITE;
  let value = root;
  for (const key of path) {
    if (shape === undefined) return undefined;
    if (shape.kind === "union") {
      shape = shape.of.find((option) =>
        Array.isArray(value)
          ? option.kind === "list"
          : option.kind === "record" || mappingOf(option, value) !== undefined
      );
      if (shape === undefined) return undefined;
    }
    if (shape.kind === "list" || shape.kind === "record") {
      shape = shape.of;
    } else {
      shape = mappingOf(shape, value)?.fields[String(key)]?.shape;
    }
    value = (value as Record<PropertyKey, unknown> | null | undefined)?.[key];
  }
  return shape;
}

/**
 * `; did you mean "x"?` for an unknown key of the mapping at `at`, when a key
 * it takes is close to it; else nothing.
 */
function keyHint(
  root: unknown,
  at: readonly PropertyKey[],
  key: string,
): string {
  const fields = mappingOf(shapeAt(root, at), valueAt(root, at))?.fields;
  if (fields === undefined) return "";
  // Another tool's key for a target, by its exact name and before the
  // nearest of ours: `top_k` is no misspelt `top_p`, nor `transformRequest`
  // a `transformResponse`. Where a mapping takes our key (a target, or a
  // judge's chat settings); a sentence without one, at a target's own level
  // only (not in its `cost`).
  if (Object.hasOwn(TARGET_WORDS, key)) {
    const [ours, what] = TARGET_WORDS[key]!;
    if (ours === undefined) {
      const target = at.length === 1 && at[0] === "target" ||
        at.length === 2 && at[0] === "targets";
      if (target) return `; ${what}`;
    } else if (Object.hasOwn(fields, ours)) {
      return `; did you mean ${JSON.stringify(ours)} (${
        what.replaceAll("KEY", key)
      })?`;
    }
  }
  const near = nearest(key, Object.keys(fields));
  if (near !== undefined) return `; did you mean ${JSON.stringify(near)}?`;
  // A gate's bar without its direction (`pass_rate`, `errors`).
  const bar = [`min_${key}`, `max_${key}`].find((k) =>
    Object.hasOwn(fields, k)
  );
  if (bar !== undefined) return `; did you mean ${JSON.stringify(bar)}?`;
  // Another tool's word for a key (`thresholds`, or misspelt `tresholds`).
  const word = nearest(key, Object.keys(OTHER_WORDS)) ??
    (Object.hasOwn(OTHER_WORDS, key) ? key : undefined);
  const [ours, what] = word === undefined ? [] : OTHER_WORDS[word]!;
  if (ours !== undefined && Object.hasOwn(fields, ours)) {
    return `; did you mean ${JSON.stringify(ours)} (${what})?`;
  }
  // Braintrust's experiment, which a suite has no key for.
  return at.length === 0 && /^experiment(?:_?name)?$/i.test(key)
    ? '; a suite names no experiment: --record FILE keeps a run, --save-baseline NAME keeps it to compare later runs with (--baseline NAME), and "evalpipe diff A B" compares two records'
    : "";
}

/**
 * For a gate's bar written straight under `gates:` (`min_pass_rate: 0.9`, or
 * `pass_rate: 0.9` without its `min_`), the gate it was meant to be, under a
 * metric of the suite; else nothing. What it cannot write as the config
 * would take it (a metric it cannot name, a bar its gate refuses) is a
 * capital placeholder, said after.
 */
function gateHint(
  root: unknown,
  path: readonly PropertyKey[],
  actual: unknown,
  folder: string,
): string {
  if (path.length !== 2 || path[0] !== "gates" || !isMapping(root)) return "";
  const gate = shapeAt(root, path);
  if (gate?.kind !== "mapping") return "";
  const fields = gate.fields;
  const written = String(path[1]);
  const key = [written, `min_${written}`, `max_${written}`].find((k) =>
    Object.hasOwn(fields, k)
  );
  if (key === undefined) return "";
  const [metric, unnamed] = key === "min_accuracy" || key === "min_macro_f1"
    // A classification figure is a gate of that metric alone.
    ? ["classification"]
    : firstMetric(root, folder);
  const bar = fields[key]!.shape;
  const takes = fitsShape(bar, actual) ? undefined : barText(bar);
  const notes = [
    ...(unnamed !== undefined ? [`METRIC ${unnamed}`] : []),
    ...(takes !== undefined ? [`N ${takes}`] : []),
  ];
  return `; a gate is per metric: gates: { ${
    metric === undefined ? "METRIC" : flowKey(metric)
  }: { ${key}: ${takes === undefined ? JSON.stringify(actual) : "N"} } }${
    notes.length > 0 ? `, ${notes.join(", ")}` : ""
  }`;
}

/**
 * The metric of the config's first scorer, as the run will name it; else
 * why it cannot be named here.
 */
function firstMetric(
  root: Record<string, unknown>,
  folder: string,
): [string] | [undefined, string] {
  const first = Array.isArray(root.scorers) ? root.scorers[0] : undefined;
  const why: [undefined, string] = [undefined, "the metric's name"];
  // Only a scorer of a type the config takes has a metric.
  if (mappingOf(shapeAt(root, ["scorers", 0]), first) === undefined) return why;
  const scorer = first as Record<string, unknown>;
  if (typeof scorer.name === "string" && scorer.name !== "") {
    return [scorer.name];
  }
  if (scorer.type !== "subprocess") return [String(scorer.type)];
  // A subprocess scorer's metric is its script's file name, found from the
  // config's folder as the run finds it.
  const name = typeof scorer.cmd === "string"
    ? scriptName(scorer.cmd, folder)
    : undefined;
  return name !== undefined ? [name] : [
    undefined,
    'the first scorer\'s "name" (its command names no script file to take a metric name from)',
  ];
}

/** What a gate's bar takes, in words: `a number from 0 to 1`. */
function barText(shape: Shape): string {
  if (shape.kind === "boolean") return "true or false";
  if (shape.kind !== "number") return "a value";
  const { min, max } = shape;
  const kind = shape.int === true ? "a whole number" : "a number";
  return min !== undefined && max !== undefined
    ? `${kind} from ${min} to ${max}`
    : min !== undefined
    ? `${kind}, ${min} or more`
    : max !== undefined
    ? `${kind} at most ${max}`
    : kind;
}

/** A key as a YAML flow mapping takes it: bare when it can be, else quoted. */
function flowKey(key: string): string {
  return /^[A-Za-z_][A-Za-z0-9_.-]*$/.test(key) ? key : JSON.stringify(key);
}

/**
 * Keys other tools (promptfoo, Inspect, EvalCore, OpenAI Evals) use for what
 * a suite names otherwise: the key here, and what it holds. A suggestion only
 * where that key may stand.
 */
const OTHER_WORDS: Record<string, readonly [string, string]> = {
  thresholds: [
    "gates",
    "the thresholds, per metric: { grounded: { min_mean: 0.8 } }",
  ],
  threshold: [
    "gates",
    "the thresholds, per metric: { grounded: { min_mean: 0.8 } }",
  ],
  assert: ["scorers", "a list of checks"],
  asserts: ["scorers", "a list of checks"],
  assertions: ["scorers", "a list of checks"],
  metrics: ["scorers", "a list of checks, each a metric"],
  evaluators: ["scorers", "a list of checks"],
  command: ["cmd", "the command, run via sh -c"],
  script: ["cmd", "the command, run via sh -c"],
  trials: ["epochs", "how many times each case runs"],
  repeat: ["epochs", "how many times each case runs"],
  max_concurrency: ["concurrency", "how many cases run at once"],
  workers: ["concurrency", "how many cases run at once"],
  // promptfoo's http provider: where the answer is in the reply.
  transformResponse: [
    "output",
    "a dot path into the reply's JSON: promptfoo's \"json.answer.text\" is answer.text here",
  ],
  responseParser: [
    "output",
    "a dot path into the reply's JSON: promptfoo's \"json.answer.text\" is answer.text here",
  ],
  // Inspect's and Braintrust's words: a task's solver, Eval()'s task and data.
  solver: ["target", "the system under test"],
  task: ["target", "the system under test"],
  data: ["dataset", "the file of cases"],
  // Inspect's epoch reducers: evalpipe averages epochs per example, and
  // `require` says when a case passes over them.
  reducer: [
    "require",
    "when a case passes over its epochs: all, majority or any (Inspect's pass_at_k); values are averaged per example, as Inspect's mean",
  ],
};

const RETRIES = "retries of a call after its first attempt";
const PARAMS =
  "a request parameter beyond temperature, max_tokens, seed, top_p and stop, sent as written: params: { KEY: … }";
const KEY_ENV =
  "the name of the environment variable that holds the key: a key is never written in a config";
const SESSION = "each case is one call here: no session is kept between cases";

/**
 * Keys of other tools' targets, as a user pastes them into a target:
 * promptfoo's http and openai providers, Inspect's generate config. The key
 * here (suggested where the target takes it) and what it holds, or none and
 * a sentence. `KEY` in the words is the key written.
 */
const TARGET_WORDS: Record<
  string,
  readonly [string, string] | readonly [undefined, string]
> = {
  // promptfoo's http provider.
  transformRequest: [
    "body",
    "the request, with {{input}} and the case's fields as placeholders: promptfoo's {{prompt}} is {{input}} here; a function has no equivalent",
  ],
  queryParams: [
    "url",
    "the query is written in it, ?q={{input}}, each placeholder URL-encoded",
  ],
  maxRetries: ["retries", RETRIES],
  useHttps: ["url", "its scheme says it: https://"],
  auth: [
    "headers",
    'a key is sent in a header, { authorization: "Bearer ${TOKEN}" }, ${NAME} read from the environment',
  ],
  request: [
    undefined,
    'promptfoo\'s raw request is written here as "method", "url", "headers" and "body"',
  ],
  validateStatus: [
    undefined,
    "a reply that is not 2xx is a target error here, its status and body quoted, and there is no other check of the status",
  ],
  session: [undefined, SESSION],
  sessionParser: [undefined, SESSION],
  sessionSource: [undefined, SESSION],
  stateful: [undefined, SESSION],
  config: [
    undefined,
    'a promptfoo provider\'s "config:" keys stand in the target itself here: { type: http, url: …, body: … }',
  ],
  // promptfoo's openai provider.
  apiKey: ["api_key_env", KEY_ENV],
  apiKeyEnvar: [
    "api_key_env",
    "the name of the environment variable that holds the key",
  ],
  apiBaseUrl: ["base_url", "the server's URL, up to /v1"],
  apiHost: ["base_url", "the server's URL, up to /v1"],
  // The OpenAI SDK's words, as a user of it writes them.
  api_key: ["api_key_env", KEY_ENV],
  max_completion_tokens: [
    "params",
    "OpenAI's newer name for max_tokens, which its reasoning models require: sent as written under params: { KEY: … }, where the target's max_tokens sends max_tokens",
  ],
  // Inspect's generate config.
  max_retries: ["retries", RETRIES],
  attempt_timeout: ["timeout", "seconds one attempt may take"],
  system_message: ["system", "the system message"],
  stop_seqs: ["stop", "the stop sequences"],
  model_base_url: ["base_url", "the server's URL, up to /v1"],
  extra_headers: ["headers", "headers sent with each request"],
  extra_body: ["params", "other fields of the request's body, sent as written"],
  max_connections: [
    undefined,
    'Inspect\'s max_connections is "concurrency" here, at the top of the suite',
  ],
  // Chat request parameters that evalpipe sends under `params`.
  top_k: ["params", PARAMS],
  frequency_penalty: ["params", PARAMS],
  presence_penalty: ["params", PARAMS],
  logit_bias: ["params", PARAMS],
  logprobs: ["params", PARAMS],
  top_logprobs: ["params", PARAMS],
  response_format: ["params", PARAMS],
  reasoning_effort: ["params", PARAMS],
  tools: ["params", PARAMS],
  tool_choice: ["params", PARAMS],
  parallel_tool_calls: ["params", PARAMS],
};

const TS_SCORER =
  'a suite runs a TypeScript scorer as a "subprocess" scorer: a script (cmd: deno run grade.ts) reads the case as JSON on stdin and prints {"score": …}, as the README\'s "Writing a scorer in any language" shows; a function of a unit is functionScorer in a script over mod.ts';

/**
 * Scorers of Inspect, of Braintrust's autoevals and promptfoo's assert
 * types, by their names written any way (`model_graded_qa`, `NumericDiff`,
 * `llm-rubric`): what evalpipe's is, and how it
 * differs. Names a near word already finds (`ExactMatch`, `Levenshtein`)
 * are left to it.
 */
const OTHER_SCORERS: Record<string, string> = {
  match:
    'Inspect\'s match() is "exact_match" here (ignore_case: true), which compares the whole output, trimmed, not its end: ask for the answer alone',
  includes:
    'Inspect\'s includes() is "contains" here, with ignore_case: true (its default there) and mode: any when "expected" lists several answers',
  pattern:
    'Inspect\'s pattern() is "regex" here, which checks the output against a pattern of its own, not a captured group against "expected"',
  answer:
    'Inspect\'s answer() has no built-in here: ask for the answer alone and score it with "exact_match"',
  choice:
    'Inspect\'s choice() has no built-in here: write the lettered choices into "input", ask for the letter alone, and score it with "exact_match" (expected "A")',
  f1: 'Inspect\'s f1() is "token_f1" here',
  modelgradedqa: 'Inspect\'s model_graded_qa() is "llm_judge" here',
  modelgradedfact: 'Inspect\'s model_graded_fact() is "correctness" here',
  numericdiff:
    'autoevals\' NumericDiff is "numeric" here: 1 within abs_tol or rel_tol of "expected", else 0',
  jsondiff:
    'autoevals\' JSONDiff is "json_match" here: 1 when the JSON equals "expected" whatever its key order, else 0, with no credit per key',
  validjson: 'autoevals\' ValidJSON is "json" here (a JSON Schema as "schema")',
  factuality:
    'autoevals\' Factuality is "correctness" here: a judge checks the output states the facts of "expected"',
  closedqa:
    'autoevals\' ClosedQA is "llm_judge" here, with its criteria as the "rubric"',
  embeddingsimilarity:
    'autoevals\' EmbeddingSimilarity is "semantic_similarity" here',
  listcontains: 'autoevals\' ListContains is "set_overlap" here',
  // promptfoo's assert types, for a suite whose asserts were moved into
  // `scorers:` as they were written.
  equals: 'promptfoo\'s "equals" assert is "exact_match" here',
  icontains:
    'promptfoo\'s "icontains" assert is "contains" here, with ignore_case: true',
  containsany:
    'promptfoo\'s "contains-any" assert is "contains" here, with mode: any and the texts as "values"',
  icontainsany:
    'promptfoo\'s "icontains-any" assert is "contains" here, with mode: any, ignore_case: true and the texts as "values"',
  containsall:
    'promptfoo\'s "contains-all" assert is "contains" here (mode: all, its default), with the texts as "values"',
  icontainsall:
    'promptfoo\'s "icontains-all" assert is "contains" here, with ignore_case: true and the texts as "values"',
  noticontains:
    'promptfoo\'s "not-icontains" assert is "not_contains" here, with ignore_case: true',
  istartswith:
    'promptfoo\'s "istarts-with" assert is "starts_with" here, with ignore_case: true',
  isjson:
    'promptfoo\'s "is-json" assert is "json" here (a JSON Schema as "schema")',
  containsjson:
    'promptfoo\'s "contains-json" assert has no built-in here: "json" checks the whole output, trimmed',
  llmrubric:
    'promptfoo\'s "llm-rubric" assert is "llm_judge" here, with a judge "model" and its value as the "rubric"',
  modelgradedclosedqa:
    'promptfoo\'s "model-graded-closedqa" assert is "llm_judge" here, with a judge "model" and its value as the "rubric"',
  contextfaithfulness:
    'promptfoo\'s "context-faithfulness" assert is "faithfulness" here, with a judge "model" and the case\'s "context"',
  similar:
    'promptfoo\'s "similar" assert is "semantic_similarity" here, with an embedding "model", its value as the case\'s "expected", and its "threshold": 0.5 unless set, where promptfoo\'s is 0.75',
  javascript:
    'promptfoo\'s "javascript" assert is a "subprocess" scorer here: a script (cmd: node check.js) reads the case as JSON on stdin and prints {"score": …}, as the README\'s "Writing a scorer in any language" shows',
  python:
    'promptfoo\'s "python" assert is a "subprocess" scorer here: a script (cmd: python3 check.py) reads the case as JSON on stdin and prints {"score": …}, as the README\'s "Writing a scorer in any language" shows',
  // A scorer function in a .ts file, as a library user writes one: a suite
  // runs scorers as programs, not as modules it imports.
  typescript: TS_SCORER,
  ts: TS_SCORER,
  function: TS_SCORER,
  module: TS_SCORER,
};

/**
 * `; did you mean "x"?` for a value that is not one of its choices; for a
 * scorer's `type` that is another tool's scorer, what evalpipe's is.
 */
function choiceHint(
  actual: unknown,
  choices: readonly unknown[],
  path: readonly PropertyKey[] = [],
): string {
  if (typeof actual !== "string") return "";
  if (path[0] === "scorers" && path.length === 3 && path[2] === "type") {
    const word = actual.toLowerCase().replace(/[^a-z0-9]/g, "");
    if (Object.hasOwn(OTHER_SCORERS, word)) return `; ${OTHER_SCORERS[word]}`;
  }
  // Another case (`JSON`, `Exact_Match`) or spelling of the word breaks
  // (`exact-match`): too far by edits for a short word, but surely meant.
  const folded = foldWord(actual);
  const near = choices.map(String).find((c) => foldWord(c) === folded) ??
    nearest(actual, choices.map(String));
  return near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`;
}

/** A word in lower case with `_`, `-` and spaces taken out, for comparing. */
function foldWord(word: string): string {
  return word.toLowerCase().replace(/[\s_-]/g, "");
}

/**
 * The unknown key to name instead of a missing one beside it (`scorerz:`
 * for `scorers:`), and the missing key it is close enough to suggest.
 */
function misspelt(
  issues: readonly z.core.$ZodIssue[],
  root: unknown,
): [readonly PropertyKey[], string] | undefined {
  const first = issues[0]!;
  if (
    first.code !== "invalid_type" || valueAt(root, first.path) !== undefined
  ) {
    return undefined;
  }
  const at = first.path.slice(0, -1);
  const missing = String(first.path[first.path.length - 1]);
  const unknown = issues.find((issue) =>
    issue.code === "unrecognized_keys" && issue.path.length === at.length &&
    issue.path.every((key, i) => key === at[i])
  ) as z.core.$ZodIssueUnrecognizedKeys | undefined;
  if (unknown === undefined) return undefined;
  const max = Math.max(1, Math.floor(missing.length / 3));
  const near = unknown.keys
    .map((key) => ({ key, d: editDistance(key, missing) }))
    .sort((a, b) => a.d - b.d)[0]!;
  // Or another tool's word for it (`command:` for `cmd:`).
  const other = unknown.keys.find((key) => {
    const word = nearest(key, Object.keys(OTHER_WORDS)) ?? key;
    return OTHER_WORDS[word]?.[0] === missing;
  });
  const key = near.d <= max ? near.key : other ?? unknown.keys[0]!;
  const hint = near.d <= max
    ? `; did you mean ${JSON.stringify(missing)}?`
    : other !== undefined
    ? `; did you mean ${JSON.stringify(missing)} (${
      OTHER_WORDS[nearest(other, Object.keys(OTHER_WORDS)) ?? other]![1]
    })?`
    : "";
  return [
    [...at, key],
    `unknown key ${JSON.stringify(pathText([...at, key]))}${hint}`,
  ];
}

/**
 * Turns the first zod issue into a sentence and the path it is about. A key
 * that is missing beside an unknown one is most likely misspelt: the unknown
 * key is named, where it stands.
 */
function describe(
  issues: readonly z.core.$ZodIssue[],
  root: unknown,
  folder: string,
): [readonly PropertyKey[], string] {
  const instead = misspelt(issues, root);
  if (instead !== undefined) return instead;
  const issue = issues[0]!;
  const path = issue.path;
  const actual = valueAt(root, path);
  // The whole file has no key to quote: call it what it is.
  const named = (p: readonly PropertyKey[]) =>
    p.length === 0 ? "the config" : JSON.stringify(pathText(p));
  switch (issue.code) {
    case "unrecognized_keys": {
      const key = issue.keys[0]!;
      // Extension fields are the top level's only (`_check.ts`), and
      // lower-case only, as Docker Compose reads them.
      const hint = isExtensionKey(key)
        ? '; "x-" keys are extension fields at the top of the file only'
        : path.length === 0 && key.startsWith("X-")
        ? '; extension keys start with lower-case "x-"'
        : keyHint(root, path, key);
      return [
        [...path, key],
        `unknown key ${JSON.stringify(pathText([...path, key]))}${hint}`,
      ];
    }
    case "invalid_value": {
      // An enum's value that is none of its words (`mode: Any`).
      const choices = issue.values.map(String);
      return [
        path,
        `${named(path)} is ${typeName(actual)}; expected one of ${
          choices.join(", ")
        }${choiceHint(actual, choices, path)}`,
      ];
    }
    case "invalid_union": {
      // A union of a count and a mapping (`epochs`): a value of one
      // branch's type is described by that branch's first problem.
      const branches = (issue as { errors?: z.core.$ZodIssue[][] }).errors;
      // (A number that is not whole fits the branch of a whole number.)
      const fit = branches?.find((b) => {
        const kind = branchType(b);
        return b.length > 0 &&
          (kind === undefined ||
            (kind === "int" && typeof actual === "number"));
      });
      if (fit !== undefined) {
        return describe(
          fit.map((i) => ({ ...i, path: [...path, ...i.path] })),
          root,
          folder,
        );
      }
      // No branch takes a value of this type: say which types would do.
      const kinds = branches?.map(branchType);
      if (
        kinds !== undefined && kinds.length > 0 &&
        kinds.every((k) => k !== undefined) && actual !== undefined
      ) {
        return [
          path,
          `${named(path)} must be ${
            kinds.map((k) => kindName(k!)).join(" or ")
          }, not ${typeName(actual)}`,
        ];
      }
      const choices = (issue as { options?: unknown[] }).options;
      if (Array.isArray(choices)) {
        // No `type`, but a key beside it close to it (`typ:`): name that key.
        const at = path.slice(0, -1);
        const last = String(path[path.length - 1]);
        const beside = valueAt(root, at);
        const typo = actual === undefined && isMapping(beside)
          ? Object.keys(beside).find((k) => nearest(k, [last]) === last)
          : undefined;
        if (typo !== undefined) {
          return [
            [...at, typo],
            `unknown key ${
              JSON.stringify(pathText([...at, typo]))
            }; did you mean ${JSON.stringify(last)}?`,
          ];
        }
        const is = actual === undefined
          ? "is missing"
          : `is ${typeName(actual)}`;
        return [
          path,
          `${named(path)} ${is}; expected one of ${choices.join(", ")}${
            choiceHint(actual, choices, path)
          }`,
        ];
      }
      return [path, `${named(path)} is not valid`];
    }
    case "invalid_type":
      if (path.length === 0 && (actual === undefined || actual === null)) {
        return [
          path,
          'the file is empty (or holds only comments): a suite needs "dataset", "target" and "scorers"; "evalpipe init" writes a starter one',
        ];
      }
      if (actual === undefined) {
        return [path.slice(0, -1), `${named(path)} is missing`];
      }
      // YAML's .inf and .nan are numbers, but none a config can use.
      if (
        (issue.expected === "number" || issue.expected === "int") &&
        typeof actual === "number" && !Number.isFinite(actual)
      ) {
        return [
          path,
          `${named(path)} must be a finite number, not ${typeName(actual)}`,
        ];
      }
      return [
        path,
        `${named(path)} must be ${kindName(issue.expected)}, not ${
          typeName(actual)
        }${yaml11Hint(issue.expected, actual)}${
          gateHint(root, path, actual, folder)
        }`,
      ];
    case "too_big":
    case "too_small": {
      const big = issue.code === "too_big";
      const limit = Number(big ? issue.maximum : issue.minimum);
      const bound = issue.inclusive === false
        ? big ? "less than" : "more than"
        : big
        ? "at most"
        : "at least";
      if (issue.origin === "array") {
        return [
          path,
          `${named(path)} must list ${bound} ${limit} item${
            limit === 1 ? "" : "s"
          }`,
        ];
      }
      if (issue.origin === "string") {
        return [
          path,
          !big && limit === 1
            ? `${named(path)} must not be empty`
            : `${named(path)} must be ${bound} ${limit} characters long`,
        ];
      }
      return [
        path,
        `${named(path)} must be ${bound} ${limit}, not ${
          typeof actual === "number" ? actual : typeName(actual)
        }`,
      ];
    }
    default:
      return [path, `${named(path)}: ${issue.message}`];
  }
}

/**
 * Validates a parsed config, naming the file and line of the first problem.
 *
 * @param value The parsed YAML.
 * @param file The file's path, for messages.
 * @param lineOf Finds the line of a path.
 * @returns The config.
 * @throws {ConfigError} On the first problem.
 *
 * @example A value parsed elsewhere: without `lineOf`, messages name no line
 * ```ts
 * import { ConfigError } from "./mod.ts";
 * import { parseConfig } from "./schema.ts";
 * const value = { dataset: "cases.jsonl", target: { type: "replay" }, scorers: [{ type: "exact_match" }, { type: "exact_match" }] };
 * const error = (() => { try { parseConfig(value, "suite.yaml"); } catch (e) { return e; } })();
 * if (!(error instanceof ConfigError) || error.line !== undefined) throw new Error("unexpected");
 * if (error.message !== 'Invalid config "suite.yaml": two scorers are named "exact_match"; give one a "name"') throw new Error(error.message);
 * ```
 */
export function parseConfig(
  value: unknown,
  file: string,
  lineOf: (path: readonly PropertyKey[]) => number | undefined = () =>
    undefined,
): SuiteConfig {
  const result = (listsDatasets(value) ? SuiteListedSchema : SuiteSchema)
    .safeParse(value);
  if (!result.success) {
    // The config's folder (what `folderOf` in config.ts gives), where its
    // scorers' scripts are found.
    const slash = file.lastIndexOf("/");
    const folder = slash < 0 ? "." : slash === 0 ? "/" : file.slice(0, slash);
    const [path, detail] = describe(result.error.issues, value, folder);
    const foreign = foreignHint(value, path, valueAt(value, path));
    throw new ConfigError(
      file,
      lineOf(path),
      foreign === undefined
        ? detail
        // Another tool's word: what evalpipe calls it, not the nearest key.
        : `${detail.replace(/; did you mean "[^"]*"\?$/, "")}; ${foreign}`,
    );
  }
  const config = result.data;
  // Loaded for an invalid (or unusual) config only: the trajectory module
  // comes with it, so that this check stays synchronous.
  checkScorers(config, file, lineOf, trajectoryChecks);
  checkDatasets(config, file, lineOf);
  checkTargets(config, file, lineOf);
  checkBudget(config, file, lineOf);
  return config;
}

/**
 * Parses and validates a suite's YAML config text.
 *
 * @param text The YAML.
 * @param path The file it came from, for messages.
 * @returns The config.
 * @throws {ConfigError} When it cannot be parsed or validated.
 *
 * @example A value of the wrong type, named with its key and line
 * ```ts
 * import { ConfigError } from "./mod.ts";
 * import { parseConfigText } from "./schema.ts";
 * const yaml = "dataset: cases.jsonl\ntarget: { type: replay }\nscorers: [{ type: exact_match }]\nconcurrency: '4'\n";
 * const error = (() => { try { parseConfigText(yaml, "suite.yaml"); } catch (e) { return e; } })();
 * if (!(error instanceof ConfigError) || error.exitCode !== 2) throw new Error("unexpected");
 * if (error.message !== 'Invalid config "suite.yaml" line 4: "concurrency" must be a number, not string "4"') throw new Error(error.message);
 * ```
 */
export function parseConfigText(text: string, path: string): SuiteConfig {
  const located = locateConfig(text, path);
  return parseConfig(located.value, path, located.lineOf);
}

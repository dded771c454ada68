/**
 * Cases (dataset records), examples (cases with their identity), and the
 * text of `expected` and `id` kept from JSON source.
 *
 * @module
 */

import { compactJson, firstMemberSpan, memberSpan } from "../io/_json_scan.ts";
import { attachVerbatimExpected } from "../io/_expected_text.ts";

/**
 * One dataset record.
 *
 * @example A RAG case, checked as a loader checks each record
 * ```ts
 * import { type Case, parseCase } from "./mod.ts";
 * const record: Case = {
 *   id: "paris",
 *   input: "What is the capital of France?",
 *   expected: "Paris",
 *   context: ["Paris is the capital of France."],
 * };
 * if (parseCase(record).context?.length !== 1) throw new Error("unexpected");
 * ```
 */
export interface Case {
  /** The case's own id; without one, its line or position stands in. */
  id?: string | number;
  /** What is sent to the target: a prompt, or a list of chat messages. */
  input: string | unknown[];
  /** The reference answer, any JSON value. */
  expected?: unknown;
  /** Retrieved context chunks (RAG); a dataset's one string is read as one chunk. */
  context?: string[];
  /** Anything else the target or a scorer may use. */
  metadata?: Record<string, unknown>;
  /** A recorded output, read by the `replay` target. */
  output?: string;
  /**
   * A recorded agent trace's file, relative to the dataset file, read by
   * the `trace` target. A case with one may leave out `input`.
   */
  trace?: string;
}

/**
 * A dataset record with its identity: what flows out of a loader.
 *
 * @example Examples fed to a target
 * ```ts
 * import type { Example } from "./mod.ts";
 * import { replayTarget, runTarget } from "../targets/mod.ts";
 * const examples: Example[] = [
 *   { example_id: "cases.jsonl#1", line: 1, case: { input: "2+2?", output: "4" } },
 * ];
 * const [unit] = await Array.fromAsync(ReadableStream.from(examples).pipeThrough(runTarget(replayTarget())));
 * if (unit?.unit_id !== "cases.jsonl#1" || unit.output !== "4") throw new Error("unexpected");
 * ```
 */
export interface Example {
  /** `<dataset path as written>#<id>`, e.g. `datasets/grounded.jsonl#1`. */
  example_id: string;
  /** The 1-based line (JSONL) or position (JSON, YAML, CSV) of the record. */
  line: number;
  /** The case; `null` when the record is malformed. */
  case: Case | null;
  /** Why the record is malformed; its Scores become `invalid case` errors. */
  invalid?: string;
  /**
   * The line of the file a malformed record starts on, where `line` is a
   * position (a JSON, YAML or CSV dataset), so messages can name both.
   */
  at?: number;
  /**
   * The example id an evalpipe before this one gave a malformed record that
   * is now named by where it stands (`d.jsonl#line-3`) because a case's own
   * id took its own name: that name with `-invalid` added while taken
   * (`d.jsonl#3-invalid`, `d.jsonl#3-invalid-invalid`), so `run --resume`
   * finds the record's Scores in a file written then.
   */
  formerly?: string;
}

/**
 * Keeps the verbatim text of a JSON object's `expected` member, when the
 * parsed value could differ from it once re-serialised.
 *
 * @param record The parsed object.
 * @param source The JSON text it was parsed from.
 * @param start Where the object starts in `source`.
 * @param end Where it ends.
 * @param unique Whether the object's keys are known to be unique (its
 *   reader refused a key given twice): then the first `expected` is the one.
 */
export function keepVerbatimExpected(
  record: { expected?: unknown },
  source: string,
  start = 0,
  end: number = source.length,
  unique = false,
): void {
  const expected = record.expected;
  if (
    expected === undefined || expected === null || typeof expected === "boolean"
  ) return;
  // A string without escapes in the record re-serialises to the same bytes.
  // Only the record is searched: each element of a JSON array searched to
  // the end of the file made loading 300,000 cases take minutes.
  if (
    typeof expected === "string" &&
    !source.slice(start, end).includes("\\")
  ) return;
  // The first `expected` is read, not the whole record after it (a unit
  // record's Scores are most of its line: looking to its end cost `view` of
  // a record 20% more). A record that may give the key twice and spells
  // another value first is read again for its last, which `JSON.parse` took.
  const first = firstMemberSpan(source, "expected", start);
  if (first === undefined) return;
  let text = compactJson(source.slice(first[0], first[1]));
  const written = unique ? text : JSON.stringify(expected);
  if (text !== written && JSON.stringify(JSON.parse(text)) !== written) {
    const last = memberSpan(source, "expected", start)!;
    text = compactJson(source.slice(last[0], last[1]));
  }
  attachVerbatimExpected(record, text);
}

/**
 * Keeps a record's integer `id` beyond 2^53 as written: `JSON.parse` rounds
 * `12345678901234567891` to `12345678901234567000`, so two cases would share
 * an id. Such an id becomes its source text, a string (an exact integer, as
 * Python reads it); every other id is left as parsed.
 *
 * @param record The parsed object.
 * @param source The JSON text it was parsed from.
 * @param start Where the object starts in `source`.
 */
export function keepVerbatimId(
  record: { id?: unknown },
  source: string,
  start = 0,
): void {
  const id = record.id;
  if (typeof id !== "number" || Number.isSafeInteger(id)) return;
  const span = memberSpan(source, "id", start);
  if (span === undefined) return;
  const text = source.slice(span[0], span[1]);
  if (/^-?[0-9]+$/.test(text)) record.id = text;
}

/**
 * Why a record read from JSON cannot be carried as it is: a number past a
 * double's range (`1e400`), which `JSON.parse` reads as Infinity and
 * `JSON.stringify` writes as `null`, so its unit records, payloads and
 * RunRecord would say `null` (for `expected`: none) where the file says a
 * number. Named by its path, as a YAML case's `.inf` is. Only walked for a
 * record whose walk for repeated keys noted such a number.
 *
 * @param value The parsed record.
 * @returns The message, or `undefined` when every number is finite.
 *
 * @example
 * ```ts
 * import { overflowingNumber } from "./case.ts";
 * const message = overflowingNumber(JSON.parse('{"input":"q","metadata":{"w":[1,1e400]}}'));
 * if (message?.startsWith('"metadata.w[1]" is a number too large') !== true) throw new Error(message);
 * ```
 */
export function overflowingNumber(value: unknown): string | undefined {
  const at = infinityAt(value, "");
  if (at === undefined) return undefined;
  return `${
    at.path === "" ? "The record" : JSON.stringify(at.path)
  } is a number too large for JSON (it reads as ${at.sign}Infinity, written as null): write it quoted, as text`;
}

/**
 * The first ±Infinity in `value`, depth-first, keys in order, with its
 * path. A stack, not recursion: a unit record is not held to a depth.
 */
function infinityAt(
  value: unknown,
  at: string,
): { path: string; sign: string } | undefined {
  const stack: Array<[unknown, string]> = [[value, at]];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [item, path] = top;
    if (typeof item === "number") {
      if (!Number.isFinite(item)) return { path, sign: item < 0 ? "-" : "" };
      continue;
    }
    if (typeof item !== "object" || item === null) continue;
    // Pushed last to first, so that the first is looked at first.
    if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) {
        stack.push([item[i], `${path}[${i}]`]);
      }
    } else {
      const keys = Object.keys(item);
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        stack.push([
          (item as Record<string, unknown>)[key],
          path === "" ? key : `${path}.${key}`,
        ]);
      }
    }
  }
  return undefined;
}

/**
 * Thrown by {@linkcode parseCase} for a record that is not a valid case. It
 * carries no exit code: a dataset turns it into that record's `invalid`, and
 * the run goes on.
 *
 * @example The field at fault, and the same message on a dataset's record
 * ```ts
 * import { CaseError, loadDataset, parseCase } from "./mod.ts";
 * const error = (() => { try { parseCase({ input: 3 }); } catch (e) { return e; } })();
 * if (!(error instanceof CaseError) || error.field !== "input") throw new Error("unexpected");
 * if (error.message !== '"input" must be a string or a list of messages, not a number') throw new Error(error.message);
 * const stdin = ReadableStream.from([new TextEncoder().encode('{"input":3}\n')]);
 * const [example] = await Array.fromAsync(await loadDataset("-", { stdin }));
 * if (example?.case !== null || example.invalid !== error.message) throw new Error("unexpected");
 * ```
 */
export class CaseError extends TypeError {
  /** The field at fault, when one is. */
  readonly field: string | undefined;

  /**
   * Creates the instance.
   *
   * @param message What is wrong.
   * @param field The field at fault.
   */
  constructor(message: string, field?: string) {
    super(message);
    this.name = "CaseError";
    this.field = field;
  }
}

/**
 * Checks a record's `context` in place, as EvalCore reads it: a list of
 * strings stays, one string becomes one chunk (`["..."]`), `null` is no
 * context (the key is removed); anything else is a {@linkcode CaseError}.
 * Every reader of cases and unit records goes through it, so a scorer, a
 * target and a RunRecord all see a list.
 *
 * @param record A parsed case or unit record.
 * @throws {CaseError} When `context` is neither a string nor a list of strings.
 *
 * @example
 * ```ts
 * import { readContext } from "./case.ts";
 * const record: Record<string, unknown> = { input: "q", context: "Paris is in France." };
 * readContext(record);
 * if (JSON.stringify(record.context) !== '["Paris is in France."]') throw new Error();
 * ```
 */
export function readContext(record: Record<string, unknown>): void {
  const context = record.context;
  if (context === undefined || Array.isArray(context) && allStrings(context)) {
    return;
  }
  if (typeof context === "string") record.context = [context];
  else if (context === null) delete record.context;
  else if (Array.isArray(context)) {
    const i = context.findIndex((c) => typeof c !== "string");
    throw new CaseError(
      `"context" must be a string or a list of strings; item ${i + 1} is ${
        typeName(context[i])
      }`,
      "context",
    );
  } else {
    throw new CaseError(
      `"context" must be a string or a list of strings, not ${
        typeName(context)
      }`,
      "context",
    );
  }
}

function allStrings(list: unknown[]): boolean {
  for (const item of list) if (typeof item !== "string") return false;
  return true;
}

/**
 * Throws a {@linkcode CaseError} for an `id` that cannot name a case or a
 * unit record: not a string or a number, or empty.
 */
export function checkId(id: unknown): void {
  if (id !== undefined && typeof id !== "string" && typeof id !== "number") {
    throw new CaseError(
      `"id" must be a string or a number, not ${typeName(id)}`,
      "id",
    );
  }
  if (id === "") {
    throw new CaseError('"id" must not be empty', "id");
  }
}

function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "a list";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/**
 * Validates a parsed dataset record as a case. Keys beyond the case's own are
 * ignored, so logs with extra fields load as they are.
 *
 * @param value A parsed record.
 * @returns The case (the same object, so verbatim `expected` stays attached).
 * @throws {CaseError} Naming the field that is wrong.
 *
 * @example
 * ```ts
 * import { parseCase } from "./case.ts";
 * const c = parseCase({ input: "2+2?", expected: "4" });
 * if (c.input !== "2+2?") throw new Error("unexpected");
 * ```
 */
export function parseCase(value: unknown): Case {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new CaseError(`A case must be an object, not ${typeName(value)}`);
  }
  const record = value as Record<string, unknown>;
  const { id, metadata, output, trace } = record;
  checkId(id);
  if (trace !== undefined && typeof trace !== "string") {
    throw new CaseError(
      `"trace" must be a file's path, not ${typeName(trace)}`,
      "trace",
    );
  }
  if (trace === "") throw new CaseError('"trace" must not be empty', "trace");
  // A recorded trace is the whole case: EvalCore's trace cases have no input.
  if (record.input === undefined && trace !== undefined) record.input = "";
  const input = record.input;
  if (input === undefined) {
    throw new CaseError(`"input" is missing${keysOf(record)}`, "input");
  }
  if (typeof input !== "string" && !Array.isArray(input)) {
    throw new CaseError(
      `"input" must be a string or a list of messages, not ${typeName(input)}${
        typeof input === "object" && input !== null
          ? `: keep its fields under "metadata", where ${promptReads(input)}`
          : ""
      }`,
      "input",
    );
  }
  if (Array.isArray(input)) checkMessages(input);
  // `"expected": null` (Braintrust's export of no answer) holds none either.
  if (record.expected == null) checkForeignAnswer(record);
  // Inspect's multiple-choice options: read as an extra key, they were
  // dropped, and the target answered without seeing them.
  if (Array.isArray(record.choices)) {
    throw new CaseError(
      `"choices" is Inspect's multiple-choice options, which evalpipe does not show the target: write them into "input" with their letters, as Inspect's multiple_choice() shows them${
        lettered(record.choices)
      }, ask for the letter alone, and score it with "exact_match" (in "metadata", a prompt's {{metadata.choices}} shows them without letters)`,
      "choices",
    );
  }
  readContext(record);
  // Braintrust's export writes `"metadata": null`: no metadata, as a null
  // context is no context.
  if (metadata === null) delete record.metadata;
  else if (
    metadata !== undefined &&
    (typeof metadata !== "object" || metadata === null ||
      Array.isArray(metadata))
  ) {
    throw new CaseError(
      `"metadata" must be an object, not ${typeName(metadata)}`,
      "metadata",
    );
  }
  if (output !== undefined && typeof output !== "string") {
    throw new CaseError(
      `"output" must be a string, not ${typeName(output)}`,
      "output",
    );
  }
  return record as unknown as Case;
}

/**
 * The first choices with their letters, in parentheses after a space (none
 * for an empty list), for the message on `choices`: an
 * Inspect target is the letter (`"B"`), which a prompt of the bare options
 * gives no way to answer.
 */
function lettered(choices: unknown[]): string {
  const shown = choices.slice(0, 3).map((choice, i) => {
    const text = typeof choice === "string" ? choice : JSON.stringify(choice);
    // Cut between whole characters, never through an emoji.
    const chars = Array.from(text ?? "");
    const cut = chars.length > 30 ? `${chars.slice(0, 30).join("")}…` : text;
    return JSON.stringify(`${String.fromCharCode(65 + i)}) ${cut}`);
  });
  if (choices.length > 3) shown.push("…");
  return shown.length === 0 ? "" : ` (${shown.join(", ")})`;
}

/**
 * The keys a record without `input` has, for its message: a dataset made by
 * another tool names its prompt otherwise (Hugging Face's `question`,
 * promptfoo's `vars`), and the key to rename is among them.
 */
function keysOf(record: Record<string, unknown>): string {
  const keys = Object.keys(record);
  if (keys.length === 0) return " (the record is empty)";
  const shown = keys.slice(0, 8).map((key) => JSON.stringify(key));
  if (keys.length > 8) shown.push("…");
  const vars = record.vars;
  return ` (the record has ${shown.join(", ")}): ${
    typeof vars === "object" && vars !== null && !Array.isArray(vars)
      ? `"vars" is promptfoo's test variables: keep them under "metadata", where ${
        promptReads(vars)
      }`
      : 'name its prompt "input"'
  }`;
}

/**
 * How a case's fields reach a prompt, named by the first of them: a target's
 * prompt reads `metadata`, and `input` is the text sent.
 */
function promptReads(fields: object): string {
  const first = Object.keys(fields)[0] ?? "question";
  const name = /^[A-Za-z_][A-Za-z0-9_]*$/.test(first) ? first : "question";
  return `a target's prompt reads them ({{metadata.${name}}}), and write the text to send as "input"`;
}

/**
 * Checks that a list `input` is chat messages: each an object with a `role`
 * (its content is the target's to judge: text, parts, or none beside tool
 * calls). A list of anything else would reach a model as such.
 */
function checkMessages(input: readonly unknown[]): void {
  // An empty conversation: a chat API refuses it, a call per case.
  if (input.length === 0) {
    throw new CaseError(
      '"input" is an empty list of messages: give at least one ({"role": "user", "content": ...}) or the text to send',
      "input",
    );
  }
  input.forEach((message, i) => {
    if (
      typeof message !== "object" || message === null || Array.isArray(message)
    ) {
      throw new CaseError(
        `"input" item ${i + 1} must be a chat message ` +
          `({"role": ..., "content": ...}), not ${typeName(message)}`,
        "input",
      );
    }
    const role = (message as { role?: unknown }).role;
    if (typeof role === "string" && role !== "") return;
    throw new CaseError(
      `"input" message ${i + 1} needs a "role" (a text such as "user")` +
        (role === undefined ? "" : `, not ${JSON.stringify(role)}`),
      "input",
    );
  });
}

/**
 * The answer keys of other tools' datasets, which evalpipe would ignore as
 * extra keys (a suite migrated as it is would measure nothing, in silence),
 * and what to do instead.
 */
export const FOREIGN_ANSWER_KEYS: Readonly<Record<string, string>> = {
  target: `Inspect's answer key; evalpipe's is "expected": rename the field`,
  ideal: `OpenAI Evals' answer key; evalpipe's is "expected": rename the field`,
  __expected:
    `promptfoo's assertion column, which evalpipe does not read: write the answer as "expected" and the checks as scorers`,
};

/**
 * What another tool's answer key is and what to write instead, or
 * `undefined` when `key` is none. Only the table's own keys count: a column
 * named `constructor` is not one. promptfoo reads every column whose name
 * starts with `__expected` as an assertion (`__expected1`, `__expected2`).
 *
 * @param key A record's key or a CSV column's name.
 * @returns The explanation.
 */
export function foreignAnswer(key: string): string | undefined {
  if (Object.hasOwn(FOREIGN_ANSWER_KEYS, key)) return FOREIGN_ANSWER_KEYS[key];
  return key.startsWith("__expected")
    ? FOREIGN_ANSWER_KEYS.__expected
    : undefined;
}

/**
 * Refuses a case without `expected` that carries another tool's answer key
 * as an answer (a text, a number or a boolean, or a list of them): its
 * answer would be lost. An object under `target` is a unit record's target
 * information, and is left alone.
 */
function checkForeignAnswer(record: Record<string, unknown>): void {
  for (const key of Object.keys(record)) {
    const what = foreignAnswer(key);
    if (what === undefined) continue;
    const value = record[key];
    const answer = Array.isArray(value)
      ? value.every(isAnswer)
      : isAnswer(value);
    if (answer) throw new CaseError(`"${key}" is ${what}`, key);
  }
}

/** A value an answer key holds: a text, or a number or boolean as JSON writes it. */
function isAnswer(value: unknown): boolean {
  // A number too (GSM8K's `"target": 18`): it was dropped in silence.
  return typeof value === "string" || typeof value === "number" ||
    typeof value === "boolean";
}

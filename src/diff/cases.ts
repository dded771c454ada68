/**
 * Cases edited between two runs under the same ids: their Scores pair all
 * the same, so a "regression" may be the case's and not the system's. `diff`
 * and `run --baseline` say so; a script composing `diffScores` calls
 * {@linkcode casesChanged} to say the same. Only runs that kept their
 * cases (a RunRecord's units, a baseline's) can tell; a Scores file carries
 * none.
 *
 * @module
 */

import { nfcKey } from "../base/nfc.ts";
import { expectedAsWritten, isRawJson } from "../io/_number_text.ts";

/**
 * What a run kept of one unit's case: a RunRecord's unit, a baseline's
 * unit, a {@linkcode Unit} as a target answered it.
 *
 * @example A unit of a RunRecord, as kept
 * ```ts
 * import type { KeptCase } from "./mod.ts";
 * const kept: KeptCase = { example_id: "d.jsonl#1", input: "2+2?", expected: "4", context: ["arithmetic"] };
 * if (!Array.isArray(kept.context) || kept.context.length !== 1) throw new Error("unexpected");
 * ```
 */
export interface KeptCase {
  /** The example. */
  example_id: string;
  /** The case's input; `undefined` when the run did not keep it. */
  input?: unknown;
  /**
   * The case's expected answer, when it has one: its number text is the
   * dataset's where the reader kept it (`1.0`, an integer past 2^53).
   */
  expected?: unknown;
  /** The case's context, when it has one. */
  context?: unknown;
  /** The case's metadata, when it has some. */
  metadata?: unknown;
}

/**
 * A field of a case that a target or scorer can see.
 *
 * @example What an older baseline kept
 * ```ts
 * import type { CaseField } from "./mod.ts";
 * const kept: CaseField[] = ["input", "expected"];
 * if (kept.includes("context")) throw new Error("unexpected");
 * ```
 */
export type CaseField = "input" | "expected" | "context" | "metadata";

/** The fields compared unless told: everything a target or scorer sees. */
const ALL_FIELDS: readonly CaseField[] = [
  "input",
  "expected",
  "context",
  "metadata",
];

/**
 * Options of {@linkcode casesChanged}.
 *
 * @example Against a baseline that kept inputs and expected answers only
 * ```ts
 * import { casesChanged, type CasesChangedOptions } from "./mod.ts";
 * const options: CasesChangedOptions = { fields: ["input", "expected"] };
 * const a = [{ example_id: "d#1", input: "q" }];
 * const b = [{ example_id: "d#1", input: "q", context: ["c"] }];
 * if (casesChanged(a, b, options) !== undefined) throw new Error("unexpected");
 * ```
 */
export interface CasesChangedOptions {
  /**
   * The fields compared: those both runs kept (a baseline written before
   * evalpipe kept context and metadata has `input` and `expected` only).
   *
   * @default {["input", "expected", "context", "metadata"]}
   */
  fields?: readonly CaseField[] | undefined;
  /**
   * Whether `expected`'s numbers compare as written (`1` and `1.0` two
   * answers); `false` compares them as `JSON.parse` reads them, as a
   * baseline written before evalpipe kept their text has them.
   *
   * @default {true}
   */
  numbersAsWritten?: boolean | undefined;
}

/**
 * The examples of both runs whose case differs.
 *
 * @example
 * ```ts
 * import type { CasesChanged } from "./mod.ts";
 * const changed: CasesChanged = { count: 4, examples: ["d#b", "d#c", "d#d"] };
 * if (changed.count <= changed.examples.length) throw new Error("unexpected");
 * ```
 */
export interface CasesChanged {
  /** How many. */
  count: number;
  /** The first few, as B wrote them, in B's order. */
  examples: string[];
}

/** How many examples a message names before it counts the rest. */
const NAMED = 3;

/**
 * The examples kept in both runs whose case differs in what a target or
 * scorer sees: `input`, `expected` (its number text as the dataset wrote
 * it, `1` and `1.0` two answers, as a subprocess scorer receives them),
 * `context` (none and an empty list two cases) and `metadata`. Ids are
 * compared in Unicode NFC, an object's keys whatever their order. Each of
 * A's examples is kept as a 53-bit hash of its case, not as the case.
 * `undefined` when none differs.
 *
 * @param a The cases of run A (a baseline), one or more per example.
 * @param b The cases of run B.
 * @param options The fields compared.
 * @returns The count and the first few ids.
 *
 * @example Two runs of a dataset whose context was edited
 * ```ts
 * import { casesChanged, casesChangedText } from "./mod.ts";
 * const a = [{ example_id: "d#1", input: "q", context: ["Paris is in France."] }];
 * const b = [{ example_id: "d#1", input: "q", context: ["Lyon is in France."] }];
 * const changed = casesChanged(a, b);
 * if (changed?.count !== 1) throw new Error("unexpected");
 * console.error(`evalpipe: ${casesChangedText(changed, "A", "B")}`);
 * ```
 */
export function casesChanged(
  a: Iterable<KeptCase>,
  b: Iterable<KeptCase>,
  options: CasesChangedOptions = {},
): CasesChanged | undefined {
  const fields = options.fields ?? ALL_FIELDS;
  const asWritten = options.numbersAsWritten ?? true;
  const before = new Map<string, number>();
  for (const c of a) {
    if (c.input === undefined) continue;
    const id = nfcKey(c.example_id);
    if (!before.has(id)) before.set(id, hash53(caseText(c, fields, asWritten)));
  }
  if (before.size === 0) return undefined;
  const examples: string[] = [];
  let count = 0;
  for (const c of b) {
    if (c.input === undefined) continue;
    const id = nfcKey(c.example_id);
    const was = before.get(id);
    if (was === undefined) continue;
    // Each epoch and target of an example has its one case: compared once.
    before.delete(id);
    if (was === hash53(caseText(c, fields, asWritten))) continue;
    count++;
    if (examples.length < NAMED) examples.push(c.example_id);
  }
  return count === 0 ? undefined : { count, examples };
}

/** A case's fields as one text: keys sorted, `expected`'s numbers as written. */
function caseText(
  c: KeptCase,
  fields: readonly CaseField[],
  asWritten: boolean,
): string {
  let text = "";
  for (const field of fields) {
    const value = field !== "expected"
      ? canonical(c[field])
      : canonical(asWritten ? expectedAsWritten(c) : c.expected ?? null);
    text += `${value}\n`;
  }
  return text;
}

/**
 * A value's JSON text with its objects' keys sorted: `""` for `undefined`
 * (absent), which `null` is not.
 */
function canonical(value: unknown): string {
  if (typeof value !== "object" || value === null || isRawJson(value)) {
    return JSON.stringify(value) ?? "";
  }
  if (Array.isArray(value)) {
    let text = "[";
    for (let i = 0; i < value.length; i++) {
      text += `${i > 0 ? "," : ""}${canonical(value[i]) || "null"}`;
    }
    return `${text}]`;
  }
  const record = value as Record<string, unknown>;
  let text = "{";
  for (const key of Object.keys(record).sort()) {
    const member = canonical(record[key]);
    // A member `undefined` is absent, as JSON.stringify leaves it out.
    if (member === "") continue;
    text += `${text.length > 1 ? "," : ""}${JSON.stringify(key)}:${member}`;
  }
  return `${text}}`;
}

/** The UTF-8 of the text being hashed, reused: grown, never shrunk. */
let bytes = new Uint8Array(1 << 16);
const encoder = new TextEncoder();

/**
 * A 53-bit hash of a text (two 32-bit FNV-1a lanes over its UTF-8 taken a
 * 32-bit word at a time, mixed): a fixed 8 bytes per example where a copy
 * of its case was as large as the case. Each case is compared with its own
 * example's only, so an edited case goes unsaid with odds of 2^-53. A word
 * at a time after one native encode, where a loop over the text's
 * characters cost +1 s at 100,000 units; the text is JSON.stringify's, so
 * it has no lone surrogate, and its UTF-8 is one to one.
 */
function hash53(text: string): number {
  if (bytes.length < text.length * 3 + 4) {
    bytes = new Uint8Array(text.length * 3 + 4);
  }
  const { written } = encoder.encodeInto(text, bytes);
  // Zeros after the last byte fill its word; `written` seeds a lane.
  bytes.fill(0, written, written + 4);
  const words = new Int32Array(bytes.buffer, 0, (written + 3) >>> 2);
  let h1 = 0x811c9dc5 ^ written;
  let h2 = 0x3c6ef372;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    h1 = Math.imul(h1 ^ w, 0x01000193);
    h2 = Math.imul(h2 ^ w, 0x5bd1e995);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 0x85ebca6b) ^ Math.imul(h2, 0xc2b2ae35);
  h2 = Math.imul(h2 ^ (h2 >>> 13), 0xc2b2ae35) ^ Math.imul(h1, 0x85ebca6b);
  h1 ^= h1 >>> 16;
  h2 ^= h2 >>> 15;
  return (h2 >>> 0) * 0x200000 + (h1 >>> 11);
}

/**
 * The line stderr gives to cases changed between two runs.
 *
 * @param changed The examples.
 * @param a What A is called (`A`, `the baseline`).
 * @param b What B is called (`B`, `this run`).
 * @returns The message, without `evalpipe: `.
 *
 * @example
 * ```ts
 * import { casesChangedText } from "./mod.ts";
 * const text = casesChangedText({ count: 1, examples: ["d#1"] }, "A", "B");
 * if (!text.startsWith('1 example has another input, expected answer, context or metadata in B than in A ("d#1")')) throw new Error(text);
 * ```
 */
export function casesChangedText(
  changed: CasesChanged,
  a: string,
  b: string,
): string {
  const { count, examples } = changed;
  const more = count > examples.length
    ? ` and ${count - examples.length} more`
    : "";
  return `${count} ${
    count === 1 ? "example has" : "examples have"
  } another input, expected answer, context or metadata in ${b} than in ${a} (${
    examples.map((id) => JSON.stringify(id)).join(", ")
  }${more}): the dataset changed between the runs, so their change may be the case's, not the system's`;
}

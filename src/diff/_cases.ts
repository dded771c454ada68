// The examples whose case two runs kept with another input or expected
// answer: the dataset edited between them, ids unchanged. Their Scores pair
// all the same, so a "regression" may be the case's and not the system's:
// `diff` and `run --baseline` say so. Only runs that kept their cases (a
// RunRecord's units, a baseline's) can tell; a Scores file carries none.

import { nfcKey } from "../base/nfc.ts";

/** What a run kept of one unit's case. */
export interface KeptCase {
  /** The example. */
  example_id: string;
  /** The case's input; `undefined` when the run did not keep it. */
  input?: unknown;
  /** The case's expected answer, when it has one. */
  expected?: unknown;
}

/** The examples of both runs whose case differs. */
export interface CasesChanged {
  /** How many. */
  count: number;
  /** The first few, as B wrote them, in B's order. */
  examples: string[];
}

/** How many examples a message names before it counts the rest. */
const NAMED = 3;

/**
 * The examples kept in both runs whose input or expected answer differs,
 * ids compared in Unicode NFC and values whatever their keys' order.
 * `undefined` when none does.
 *
 * @param a The cases of run A (a baseline), one or more per example.
 * @param b The cases of run B.
 * @returns The count and the first few ids.
 */
export function casesChanged(
  a: Iterable<KeptCase>,
  b: Iterable<KeptCase>,
): CasesChanged | undefined {
  const before = new Map<string, string>();
  for (const c of a) {
    if (c.input === undefined) continue;
    const id = nfcKey(c.example_id);
    if (!before.has(id)) before.set(id, caseText(c));
  }
  if (before.size === 0) return undefined;
  const seen = new Set<string>();
  const examples: string[] = [];
  let count = 0;
  for (const c of b) {
    if (c.input === undefined) continue;
    const id = nfcKey(c.example_id);
    // Each epoch and target of an example has its one case.
    if (seen.has(id)) continue;
    seen.add(id);
    const was = before.get(id);
    if (was === undefined || was === caseText(c)) continue;
    count++;
    if (examples.length < NAMED) examples.push(c.example_id);
  }
  return count === 0 ? undefined : { count, examples };
}

/** A case's input and expected answer as one text, keys sorted. */
function caseText(c: KeptCase): string {
  return JSON.stringify([c.input, c.expected ?? null], sortedKeys);
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return value;
  }
  return Object.fromEntries(
    Object.entries(value).sort(([x], [y]) => x < y ? -1 : x > y ? 1 : 0),
  );
}

/**
 * The line stderr gives to cases changed between two runs.
 *
 * @param changed The examples.
 * @param a What A is called (`A`, `the baseline`).
 * @param b What B is called (`B`, `this run`).
 * @returns The message, without `evalpipe: `.
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
  } another input or expected answer in ${b} than in ${a} (${
    examples.map((id) => JSON.stringify(id)).join(", ")
  }${more}): the dataset changed between the runs, so their change may be the case's, not the system's`;
}

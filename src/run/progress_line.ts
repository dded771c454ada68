/**
 * The progress line `run` and `score` draw on stderr when it is a terminal:
 * units done of the total (or a counter when the total is unknown), rate,
 * ETA, errors so far, units in flight, and what holds the network calls
 * back. Redrawn in place at most ten times a second; ended with a newline.
 * A script draws the same line by feeding it what its stages do.
 *
 * @module
 */

import type { FlowState, FlowWatch } from "../net/flow.ts";
import type { Score } from "../score/mod.ts";

/**
 * The numbers one frame shows.
 *
 * @example
 * ```ts
 * import type { ProgressNumbers } from "./mod.ts";
 * const n: ProgressNumbers = { done: 3, total: 10, rate: undefined, errors: 0, inFlight: 2, flow: undefined };
 * if (n.total !== 10) throw new Error("unexpected");
 * ```
 */
export interface ProgressNumbers {
  /** Units done (a resume's skipped units included). */
  done: number;
  /** Units the run makes in all, when known. */
  total: number | undefined;
  /** Units done per second lately, when known. */
  rate: number | undefined;
  /** Error and blocked Scores so far. */
  errors: number;
  /** Target calls started and not yet ended (score: units not yet written). */
  inFlight: number;
  /** What holds the network calls back, when something does. */
  flow: FlowState | undefined;
}

/** Seconds as people read them: `45s`, `3m05s`, `1h02m`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) {
    return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  }
  const m = Math.floor(s / 60);
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
}

function formatRate(rate: number): string {
  return rate >= 100
    ? rate.toFixed(0)
    : rate >= 10
    ? rate.toFixed(1)
    : rate.toFixed(2);
}

/** What holds the calls back, in words; `undefined` when nothing does. */
export function flowNote(flow: FlowState | undefined): string | undefined {
  if (flow === undefined) return undefined;
  const { waiting } = flow;
  const calls = (n: number) => `${n} call${n === 1 ? "" : "s"}`;
  if (waiting.retry_after > 0) {
    return `server asked to wait (Retry-After ${
      formatDuration(Math.ceil(flow.retryAfterMs / 1000))
    }): ${calls(waiting.retry_after)} waiting`;
  }
  if (waiting.rate_limit > 0) {
    return `held by rate_limit: ${calls(waiting.rate_limit)} waiting`;
  }
  if (waiting.backoff > 0) {
    return `retrying after errors: ${calls(waiting.backoff)} waiting`;
  }
  if (waiting.slots > 0) {
    return `open-file limit: ${calls(waiting.slots)} waiting`;
  }
  return undefined;
}

/**
 * One frame's text, at most `columns - 1` wide (a line as wide as the
 * terminal would wrap): the parts that do not fit are left out, least
 * useful first.
 */
export function formatFrame(
  n: ProgressNumbers,
  columns: number,
  color: boolean,
): string {
  const paint = (code: string, text: string) =>
    color ? `\x1b[${code}m${text}\x1b[0m` : text;
  const count = n.total !== undefined
    ? `${n.done}/${n.total} units (${
      n.total === 0 ? 100 : Math.floor(n.done * 100 / n.total)
    }%)`
    : `${n.done} unit${n.done === 1 ? "" : "s"}`;
  const note = flowNote(n.flow);
  const eta = n.total !== undefined && n.rate !== undefined && n.rate > 0 &&
      n.done < n.total
    ? `ETA ${formatDuration((n.total - n.done) / n.rate)}`
    : undefined;
  // [text, plain width, priority: the lowest goes first when short of room]
  const parts: Array<[string, number, number]> = [[count, count.length, 9]];
  const add = (text: string | undefined, painted: string, priority: number) => {
    if (text !== undefined) parts.push([painted, text.length, priority]);
  };
  const rate = n.rate !== undefined ? `${formatRate(n.rate)}/s` : undefined;
  add(rate, rate ?? "", 3);
  add(eta, eta ?? "", 5);
  const errors = `${n.errors} error${n.errors === 1 ? "" : "s"}`;
  add(errors, n.errors > 0 ? paint("31", errors) : errors, 6);
  const inFlight = n.inFlight > 0 ? `${n.inFlight} in flight` : undefined;
  add(inFlight, inFlight ?? "", 2);
  add(note, note !== undefined ? paint("33", note) : "", 7);
  const room = Math.max(1, columns - 1);
  const sep = 2;
  // The count always, cut if it must be; then the most useful parts that
  // fit, shown in their own order.
  if (count.length > room) {
    return room <= 1 ? "…" : `${count.slice(0, room - 1)}…`;
  }
  const kept = new Set([parts[0]!]);
  let used = count.length;
  for (const part of parts.slice(1).sort((a, b) => b[2] - a[2])) {
    if (used + sep + part[1] <= room) {
      kept.add(part);
      used += sep + part[1];
    }
  }
  return parts.filter((p) => kept.has(p)).map((p) => p[0]).join("  ");
}

/**
 * Options of {@linkcode ProgressLine}.
 *
 * @example Stderr, 80 columns, no colours
 * ```ts
 * import type { ProgressLineOptions } from "./mod.ts";
 * const bytes = new TextEncoder();
 * const options: ProgressLineOptions = {
 *   write: (text) => void Deno.stderr.writeSync(bytes.encode(text)),
 *   columns: () => 80,
 *   color: false,
 * };
 * if (options.color) throw new Error("unexpected");
 * ```
 */
export interface ProgressLineOptions {
  /** Writes to the terminal. */
  write: (text: string) => void;
  /** The terminal's columns now. */
  columns: () => number;
  /** Whether to use colours. */
  color: boolean;
  /**
   * What holds the network calls back, shown on the line (a `FlowWatch`
   * given to the network targets and judges).
   * @default {undefined}
   */
  flow?: FlowWatch | undefined;
}

/** How long the rate looks back, in ms. */
const RATE_WINDOW_MS = 10_000;
/** The fastest redraw: ten times a second. */
const FRAME_MS = 100;

/**
 * The progress line: fed counts as the command goes, drawn by a timer at
 * most every 100 ms and only when its text changed. It is a `RunProgress`:
 * `runSuite`'s `progress` option takes it as it is, as `run` gives it; a
 * pipeline of stages feeds it itself (`total`, `start`, `end`, `skip`,
 * `done`). Only `finish()` stops its timer (which never keeps a script
 * alive).
 *
 * @example A pipeline's progress, drawn into a string
 * ```ts
 * import { exactMatch, ProgressLine, replayTarget, runTarget, scoreUnits } from "../../mod.ts";
 * let drawn = "";
 * const line = new ProgressLine({ write: (t) => void (drawn += t), columns: () => 80, color: false });
 * const examples = [1, 2, 3].map((i) => ({ example_id: `d#${i}`, line: i, case: { input: "q", expected: "a", output: "a" } }));
 * line.begin();
 * line.total(examples.length);
 * for await (const score of ReadableStream.from(examples)
 *   .pipeThrough(runTarget(replayTarget())).pipeThrough(scoreUnits([exactMatch()]))) line.done([score]);
 * line.finish();
 * if (!drawn.endsWith("\n") || !drawn.includes("3/3 units (100%)")) throw new Error(JSON.stringify(drawn));
 * ```
 */
export class ProgressLine {
  #options: ProgressLineOptions;
  #total: number | undefined;
  #done = 0;
  #skipped = 0;
  #started = 0;
  #ended = 0;
  #errors = 0;
  #lastUnit: string | undefined;
  // (time, units done and not skipped) samples, for the rate.
  #samples: Array<[number, number]> = [];
  #timer: ReturnType<typeof setInterval> | undefined;
  #shown = "";
  #begun = performance.now();

  /**
   * Makes a line, drawn once its units are known or begin.
   *
   * @param options Where to draw, how wide, with or without colours.
   */
  constructor(options: ProgressLineOptions) {
    this.#options = options;
  }

  /** The run's flow watch, for `RunProgress.flow`. */
  get flow(): FlowWatch | undefined {
    return this.#options.flow;
  }

  /** Starts the redraw timer (anew, when it had begun). */
  begin(): void {
    // One timer, whatever the calls: finish() stops only the last.
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#begun = performance.now();
    this.#samples = [[this.#begun, 0]];
    const timer = setInterval(() => this.draw(), FRAME_MS);
    // The line never keeps the command alive.
    Deno.unrefTimer(timer);
    this.#timer = timer;
  }

  /** The units the command makes in all. */
  total(units: number): void {
    this.#total = units;
  }

  /** Units that start. */
  start(units: number): void {
    this.#started += units;
  }

  /** Units whose target call ended: no longer in flight. */
  end(units: number): void {
    this.#ended += units;
  }

  /** Units a resume skips: done, but not part of the rate. */
  skip(units: number): void {
    this.#skipped += units;
    this.#done += units;
    this.#started += units;
    this.#ended += units;
  }

  /** The Scores of whole units, as they are written. */
  done(scores: readonly Score[]): void {
    let last = this.#lastUnit;
    for (const s of scores) {
      if (s.status === "error" || s.status === "blocked") this.#errors++;
      if (s.unit_id !== last) {
        this.#done++;
        last = s.unit_id;
      }
    }
    this.#lastUnit = last;
  }

  /** The numbers now. */
  numbers(now: number = performance.now()): ProgressNumbers {
    const fresh = this.#done - this.#skipped;
    const samples = this.#samples;
    samples.push([now, fresh]);
    while (samples.length > 2 && now - samples[1]![0] >= RATE_WINDOW_MS) {
      samples.shift();
    }
    const [t0, d0] = samples[0]!;
    const elapsed = now - t0;
    // A rate from under a second of work, or from no unit, says nothing yet.
    const rate = elapsed >= 1000 && fresh > 0
      ? (fresh - d0) * 1000 / elapsed
      : undefined;
    const state = this.#options.flow?.state();
    return {
      done: this.#done,
      total: this.#total,
      rate,
      errors: this.#errors,
      inFlight: Math.max(0, this.#started - this.#ended),
      flow: state,
    };
  }

  /** Redraws the line if its text changed; nothing before the work begins. */
  draw(): void {
    if (!this.#begunWork()) return;
    const text = formatFrame(
      this.numbers(),
      this.#options.columns(),
      this.#options.color,
    );
    if (text === this.#shown) return;
    this.#shown = text;
    this.#options.write(`\r\x1b[K${text}`);
  }

  /** Clears the line, for a message to be written on it. */
  clear(): void {
    if (this.#shown === "") return;
    this.#shown = "";
    this.#options.write("\r\x1b[K");
  }

  /**
   * Stops the timer and leaves the last frame, with how long it took, on a
   * line of its own, so that what follows starts on a clean line. A command
   * that never got to its units (a config refused) leaves nothing.
   */
  finish(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    if (!this.#begunWork()) return this.clear();
    const took = `in ${
      formatDuration((performance.now() - this.#begun) / 1000)
    }`;
    // The command is over: what was done, and nothing in flight or waiting.
    const frame = formatFrame(
      { ...this.numbers(), rate: undefined, inFlight: 0, flow: undefined },
      this.#options.columns() - took.length - 2,
      this.#options.color,
    );
    this.#shown = "";
    this.#options.write(`\r\x1b[K${frame}  ${took}\n`);
  }

  #begunWork(): boolean {
    return this.#started > 0 || this.#done > 0 || this.#total !== undefined;
  }
}

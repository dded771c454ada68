/**
 * The persistent scorer mode, an opt-in extension of protocol v0: one
 * long-lived process per scorer reads one payload per line on stdin and
 * writes one verdict per line on stdout, in order. Payloads and verdicts have
 * the v0 shapes; a verdict line may instead be `{"error": "<message>"}` to
 * fail that case alone. A crash or a hang turns the cases in flight into
 * error Scores, and the next case starts a new process.
 *
 * @module
 */

import { startCommand } from "../process/spawner.ts";
import type { SessionChild } from "../process/types.ts";
import { LineSplitter } from "../io/line_stream.ts";
import type { Line } from "../io/line_stream.ts";
import type { Score } from "../score/mod.ts";
import {
  scoreFromVerdict,
  type Scorer,
  type ScorerContext,
  UNIT_RANGE,
} from "./scorer.ts";
import {
  parseVerdict,
  scorerPayload,
  SubprocessScorerError,
  subprocessScorerSetup,
} from "./subprocess_scorer.ts";
import type { Unit } from "../dataset/unit.ts";

/**
 * Options of {@linkcode persistentScorer}.
 *
 * @example Name the metric, cap the verdict line, keep few payloads ahead
 * ```ts
 * import { persistentScorer, type PersistentScorerOptions } from "./mod.ts";
 * const options: PersistentScorerOptions = { name: "ok", cwd: "/", timeout: 10, maxLineBytes: 4096, inFlight: 2 };
 * const s = persistentScorer(`while read -r line; do echo '{"score": 0.5}'; done`, options);
 * const score = await s.score({ example_id: "a#1", unit_id: "a#1", input: "q", output: "a" }, {});
 * await s.close!();
 * if ("scores" in score || score.metric !== "ok" || score.value !== 0.5) throw new Error("unexpected");
 * ```
 */
export interface PersistentScorerOptions {
  /**
   * The metric name.
   * @default {the file name, without extension, of the script the command runs}
   */
  name?: string;
  /**
   * The folder the command runs in.
   * @default {Deno.cwd()}
   */
  cwd?: string;
  /**
   * Seconds the process may spend on one case, counted from the verdict
   * before it (or from its payload, when nothing was pending); past it the
   * process is killed and restarted.
   * @default {60}
   */
  timeout?: number;
  /**
   * The longest verdict line read.
   * @default {1048576}
   */
  maxLineBytes?: number;
  /**
   * Payloads written ahead of their verdicts.
   * @default {64}
   */
  inFlight?: number;
}

interface Pending {
  resolve(line: string): void;
  reject(error: Error): void;
  timer?: ReturnType<typeof setTimeout>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** One running process and the cases waiting for its verdicts. */
class Worker {
  readonly #child: SessionChild;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending: Pending[] = [];
  readonly #label: string;
  readonly #timeoutMs: number;
  #stderr = "";
  #dead: Error | undefined;
  readonly done: Promise<void>;

  constructor(
    cmd: string,
    cwd: string,
    timeoutMs: number,
    maxLineBytes: number,
  ) {
    this.#label = `scorer ${JSON.stringify(cmd)}`;
    this.#timeoutMs = timeoutMs;
    try {
      this.#child = startCommand(cmd, { cwd });
    } catch (error) {
      // A missing folder or program: the protocol's words, as per case.
      if (!(error instanceof Error)) throw error;
      throw new SubprocessScorerError(
        `failed to spawn subprocess scorer: ${cmd}`,
        "scorer.spawn_failed",
      );
    }
    this.#writer = this.#child.stdin.getWriter();
    const verdicts = this.#readVerdicts(maxLineBytes);
    const errors = this.#readStderr();
    this.done = Promise.all([
      verdicts,
      errors,
      // Settles once it has exited and what it left behind has been killed.
      this.#child.status.then(async (status) => {
        // The exit can be seen before the pipes are drained: the verdicts it
        // wrote first are still owed to their cases, and stderr says why.
        await Promise.allSettled([verdicts, errors]);
        const how = status.signal !== null
          ? `was killed by ${status.signal}`
          : `exited with status ${status.code}`;
        const stderr = this.#stderr.trim();
        this.#fail(
          new SubprocessScorerError(
            `${this.#label} ${how}${stderr === "" ? "" : `: ${stderr}`}`,
            "scorer.exit_status",
          ),
        );
      }),
    ]).then(() => {});
  }

  get alive(): boolean {
    return this.#dead === undefined;
  }

  get busy(): number {
    return this.#pending.length;
  }

  async #readVerdicts(maxLineBytes: number): Promise<void> {
    const splitter = new LineSplitter(maxLineBytes);
    const lines: Line[] = [];
    for await (const chunk of this.#child.stdout) {
      splitter.push(chunk, lines);
      for (const line of lines) this.#answer(line);
      lines.length = 0;
    }
    splitter.end(lines);
    for (const line of lines) this.#answer(line);
  }

  async #readStderr(): Promise<void> {
    // Keep the last few KiB: enough to explain a crash, never unbounded.
    for await (const chunk of this.#child.stderr) {
      this.#stderr = (this.#stderr + decoder.decode(chunk)).slice(-4096);
    }
  }

  #answer(line: Line): void {
    const pending = this.#pending.shift();
    if (pending === undefined) return; // a line nobody asked for is ignored
    clearTimeout(pending.timer);
    this.#arm();
    if (line.error !== undefined) {
      pending.reject(
        new SubprocessScorerError(
          `${this.#label} printed an unreadable verdict line: ${line.error}`,
          "scorer.invalid_verdict",
        ),
      );
    } else pending.resolve(line.text);
  }

  /**
   * Starts the clock of the oldest case in flight. Verdicts come in order, so
   * a case's time starts when the one before it is answered: the cases queued
   * behind a slow one do not spend their timeout waiting.
   */
  #arm(): void {
    const head = this.#pending[0];
    if (head === undefined || head.timer !== undefined) return;
    head.timer = setTimeout(() => {
      // This case gets the timeout; the others in flight, the restart.
      if (this.#pending[0] === head) this.#pending.shift();
      head.reject(
        new SubprocessScorerError(
          `${this.#label} timed out after ${
            this.#timeoutMs / 1000
          } s (its process group was killed)`,
          "scorer.timeout",
        ),
      );
      this.kill(
        new SubprocessScorerError(
          `${this.#label} was restarted: another case timed out`,
          "scorer.interrupted",
        ),
      );
    }, this.#timeoutMs);
  }

  #fail(error: Error): void {
    this.#dead ??= error;
    for (const pending of this.#pending.splice(0)) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
  }

  /** Kills the process group; cases in flight fail with `error`. */
  kill(error: Error): void {
    this.#fail(error);
    this.#child.kill();
  }

  /** Sends one payload; resolves with its verdict line. */
  async ask(payload: string, signal?: AbortSignal): Promise<string> {
    if (this.#dead !== undefined) throw this.#dead;
    if (signal?.aborted) {
      throw new SubprocessScorerError(
        `${this.#label} was interrupted`,
        "scorer.interrupted",
      );
    }
    const answer = new Promise<string>((resolve, reject) => {
      this.#pending.push({ resolve, reject });
      this.#arm();
    });
    const onAbort = () =>
      this.kill(
        new SubprocessScorerError(
          `${this.#label} was interrupted`,
          "scorer.interrupted",
        ),
      );
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      try {
        await this.#writer.write(encoder.encode(`${payload}\n`));
      } catch (error) {
        // A broken pipe: the process died before it read this payload, and
        // its exit says why. Anything else: give up on this process, so that
        // the answer below is settled (by the kill) rather than left hanging.
        if (!(error instanceof Deno.errors.BrokenPipe)) {
          this.kill(
            new SubprocessScorerError(
              `${this.#label} could not be written to: ${error}`,
            ),
          );
        }
      }
      return await answer;
    } finally {
      signal?.removeEventListener("abort", onAbort);
    }
  }

  /** Closes stdin so the process can finish, then makes sure it has. */
  async close(): Promise<void> {
    await this.#writer.close().catch((error) => {
      // Already closed by a crash: nothing more to say to it.
      if (
        !(error instanceof Deno.errors.BrokenPipe || error instanceof TypeError)
      ) throw error;
    });
    const grace = setTimeout(
      () =>
        this.kill(
          new SubprocessScorerError(
            `${this.#label} was stopped`,
            "scorer.interrupted",
          ),
        ),
      2000,
    );
    await this.done;
    clearTimeout(grace);
  }
}

/**
 * A subprocess scorer in persistent mode (see the module doc). Its metric
 * name and `evaluator_version` are those the per-case mode would give the
 * same command. Call `close()` when done: it ends the process.
 *
 * @param cmd The command, run via `sh -c` in its own process group.
 * @param options Name, folder, timeout and limits.
 * @returns The scorer.
 *
 * @example
 * ```ts
 * import { persistentScorer } from "./persistent_scorer.ts";
 * const s = persistentScorer(`while read -r line; do echo '{"score": 1}'; done`, { name: "always" });
 * const score = await s.score({ example_id: "a#1", unit_id: "a#1", input: "q", output: "a" }, {});
 * await s.close!();
 * if ("scores" in score || score.value !== 1) throw new Error("unexpected");
 * ```
 */
export function persistentScorer(
  cmd: string,
  options: PersistentScorerOptions = {},
): Scorer {
  const { cwd, name, version, timeout } = subprocessScorerSetup(cmd, options);
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  const inFlight = Math.max(1, options.inFlight ?? 64);
  let worker: Worker | undefined;
  const waiting: Array<() => void> = [];
  const retired: Worker[] = [];
  const current = (): Worker => {
    if (worker === undefined || !worker.alive) {
      if (worker !== undefined) retired.push(worker);
      worker = new Worker(cmd, cwd, timeout * 1000, maxLineBytes);
    }
    return worker;
  };
  return {
    name,
    version,
    range: UNIT_RANGE,
    async score(unit: Unit, context: ScorerContext): Promise<Score> {
      if (context.signal?.aborted) {
        throw new SubprocessScorerError(
          `scorer ${JSON.stringify(cmd)} was interrupted`,
          "scorer.interrupted",
        );
      }
      while (worker !== undefined && worker.alive && worker.busy >= inFlight) {
        await new Promise<void>((resolve) => waiting.push(resolve));
      }
      let line: string;
      try {
        line = await current().ask(scorerPayload(unit), context.signal);
      } finally {
        waiting.shift()?.();
      }
      const error = perCaseError(line);
      if (error !== undefined) {
        throw new SubprocessScorerError(
          `scorer ${JSON.stringify(cmd)} reported: ${error}`,
          "scorer.reported",
        );
      }
      return scoreFromVerdict(name, version, parseVerdict(cmd, line));
    },
    async close() {
      const all = [...retired, ...(worker !== undefined ? [worker] : [])];
      worker = undefined;
      retired.length = 0;
      await Promise.all(all.map((w) => w.close()));
    },
  };
}

/** The message of a `{"error": "..."}` line, the extension's per-case failure. */
function perCaseError(line: string): string | undefined {
  if (!line.includes('"error"')) return undefined;
  try {
    const value = JSON.parse(line);
    if (
      typeof value === "object" && value !== null &&
      typeof value.error === "string" && !("score" in value)
    ) {
      return value.error;
    }
  } catch (error) {
    // Not JSON: parseVerdict reports it in the protocol's words.
    if (!(error instanceof SyntaxError)) throw error;
  }
  return undefined;
}

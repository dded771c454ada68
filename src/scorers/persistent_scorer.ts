/**
 * The persistent scorer mode, an opt-in extension of protocol v0: one
 * long-lived process per scorer reads one payload per line on stdin and
 * writes one verdict per line on stdout, in order. Payloads and verdicts have
 * the v0 shapes; a verdict line may instead be `{"error": "<message>"}` to
 * fail that case alone. A crash or a hang fails the case the process owed
 * its next verdict, and a new process takes the cases behind it (below).
 *
 * Payloads go out in as few writes as keep the process busy: those of cases
 * started together in one write, and while the process has more than half
 * of `inFlight` cases unanswered, new ones gather until it has answered
 * enough (or has been quiet for a millisecond), so that a fast scorer reads
 * many lines per read. A scorer must therefore read its stdin as a stream of
 * lines, not expect one line per read.
 *
 * A crash or a timeout costs one case, not all those in flight: the case the
 * process owed its next verdict gets the error, and the cases behind it,
 * which it never answered, are sent again to a new process (after an exit
 * with status 0, that case too). A case that a second process loses without
 * having answered anything gets the error too, so a scorer that dies on
 * every start costs two processes, not one per case.
 *
 * A verdict line carries no case id, so a line too many (a banner on
 * stdout, a verdict written twice) hands every later case the verdict of the
 * one before, and cannot be undone. It is counted instead: a line that comes
 * when no case is waiting (blank lines aside, and those of a process killed
 * for a timeout or an interrupt, whose cases went elsewhere), which the
 * scorer's `surplusLines()` gives once `close()` has resolved.
 *
 * @module
 */

import {
  clearDeadline,
  type Deadline,
  EXIT_DRAIN_MS,
  setDeadline,
} from "../process/_deadlines.ts";
import { startCommand } from "../process/spawner.ts";
import type { SessionChild } from "../process/types.ts";
import {
  INVALID_UTF8,
  type Line,
  LineSplitter,
  TOO_LONG,
} from "../io/line_stream.ts";
import type { Score } from "../score/mod.ts";
import {
  scoreFromVerdict,
  type Scorer,
  type ScorerContext,
  UNIT_RANGE,
} from "./scorer.ts";
import {
  type CasesEnd,
  END_OF_CASES,
  type Failure,
  scoresAsMade,
  UNIT_LATER,
  UNIT_PATH,
  type UnitLater,
  type UnitPath,
  unitScore,
} from "./_unit_path.ts";
import { Later } from "../io/_later.ts";
import { capNote, notUtf8Warning } from "../process/run_command.ts";
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
  name?: string | undefined;
  /**
   * The folder the command runs in.
   * @default {Deno.cwd()}
   */
  cwd?: string | undefined;
  /**
   * Seconds the process may spend on one case, counted from the verdict
   * before it (or from its payload, when nothing was pending); past it the
   * process is killed and restarted.
   * @default {60}
   */
  timeout?: number | undefined;
  /**
   * The longest verdict line read.
   * @default {1048576}
   */
  maxLineBytes?: number | undefined;
  /**
   * The most stderr a case may cost: once more than this has come since the
   * verdict before it (or since its payload, when the process was idle),
   * the case it owed next is the per-case mode's `scorer.output_cap` error,
   * the process is killed and a new one takes the cases behind it, as after
   * a timeout. Logs spread over many cases never pass it. Stdout and stderr
   * are read in turns, so a case's count is its own logs give or take what
   * a pipe holds (64 KiB) of its neighbours' each way.
   * @default {1048576}
   */
  maxStderrBytes?: number | undefined;
  /**
   * What a cap's error names as raising it, when the caps come from a
   * setting of the caller's own (a suite's `max_output_bytes`, a tool's
   * flag) rather than these options.
   * @default {the option of the cap: "maxLineBytes" or "maxStderrBytes"}
   */
  capSetting?: string | undefined;
  /**
   * Payloads written ahead of their verdicts, at most. While more than half
   * of them are unanswered, new payloads gather and go out together (see
   * the module doc). Deep enough that a fast scorer's start-up is spent
   * with a thousand payloads already waiting in its pipe.
   * @default {1024}
   */
  inFlight?: number | undefined;
  /**
   * Characters of payload written ahead of their verdicts, at most, beside
   * `inFlight`: while those unanswered reach it, new cases wait (one case
   * is always let through), so that large payloads do not pile up.
   * @default {16777216}
   */
  inFlightChars?: number | undefined;
  /**
   * Starts the process as the scorer is made, not at its first case, so
   * that the process's start-up overlaps the caller's (`score --persistent`
   * does this). A spawn failure then waits for the first case, which tries
   * again and gets it as its error.
   * @default {false}
   */
  startNow?: boolean | undefined;
}

interface Listening {
  onAbort(): void;
  cases: number;
}

/**
 * A case in flight. Asked through `score`, it gets its Score or its error
 * as a rejection; asked through the unit path (`unit` set), its final
 * Scores, a failure among them as `failed` makes it.
 */
interface Pending {
  resolve(value: Score | Score[]): void;
  reject(error: Error): void;
  /** The signal of the run the case belongs to, if any. */
  signal: AbortSignal | undefined;
  unit: Unit | undefined;
  /** Its payload line, kept to send it again after a crash. */
  payload: string;
  /**
   * How many processes that answered nothing lost it: at two (a scorer
   * that cannot start, not a case it cannot take), it ends with the error.
   */
  barren: number;
}

/**
 * A pooled unit path's case: its own `Later`, settled with its final Scores
 * (a failure among them), and its queue entry in the worker: one object per
 * case, no promise.
 */
class PathCase extends Later<Score[]> implements Pending {
  readonly signal: AbortSignal | undefined;
  readonly unit: Unit;
  readonly payload: string;
  barren = 0;
  constructor(unit: Unit, signal: AbortSignal | undefined, payload: string) {
    super();
    this.unit = unit;
    this.signal = signal;
    this.payload = payload;
  }
  resolve(value: Score | Score[]): void {
    this.settle(value as Score[]);
  }
  reject(): void {
    // Never called: a case with a unit is settled with its error Scores.
    throw new TypeError("a unit path's case is never rejected");
  }
}

/** How a worker turns a verdict line into a Score, and a failure into Scores. */
interface Verdicts {
  /** The case's Score (with the unit's ids when `unit` is given); throws the case's error. */
  score(line: string, unit: Unit | undefined): Score;
  /** The Scores of a unit path's case that failed. */
  failed(error: Error, unit: Unit): Score[];
}

/** Ends a case with its error: a rejection, or a unit path's error Scores. */
function failCase(pending: Pending, error: Error, verdicts: Verdicts): void {
  const unit = pending.unit;
  if (unit === undefined) pending.reject(error);
  else pending.resolve(verdicts.failed(error, unit));
}

/**
 * What a worker does with the cases its process never answered once it is
 * gone: they go to a new process, or end with `error`. `ended` says that the
 * process had been told its input was over, `answered` that it gave at least
 * one verdict.
 */
type Lost = (
  cases: Pending[],
  error: Error,
  ended: boolean,
  answered: boolean,
) => void;

const encoder = new TextEncoder();

/** The size of the buffer verdicts are read into. */
const READ_BYTES = 64 * 1024;

/** How long a process that has work queued may be quiet before more comes. */
const QUIET_MS = 1;

/**
 * Resolves on a timer, not a microtask: the event loop turns in between and
 * delivers the reads that are ready, stdout's verdicts among them.
 */
function caughtUp(): Promise<void> {
  return new Promise((resolve) => {
    setDeadline(performance.now() + QUIET_MS, resolve);
  });
}

/** What a crash or timeout of a process that gave no verdict adds. */
const UNANSWERED =
  " before its first verdict (in persistent mode a scorer answers each payload line as it reads it; one that reads its stdin to the end, as a per-case scorer may, answers none)";

/**
 * One running process and the cases waiting for its verdicts. Per case it
 * costs one promise and one queue entry: payloads that are ready together
 * go out in one write, one deadline timer serves every case, and each run's
 * abort signal is listened to once per process.
 */
class Worker {
  readonly #child: SessionChild;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #pending: Pending[] = [];
  readonly #label: string;
  readonly #cmd: string;
  readonly #timeoutMs: number;
  readonly #verdicts: Verdicts;
  readonly #settled: () => void;
  readonly #lost: Lost;
  readonly #surplus: () => void;
  /** Whether the process gave a verdict (a line, read or not). */
  #answered = false;
  /** Characters of the payloads of the cases in flight. */
  #chars = 0;
  /** Payload lines not written yet, and how many. */
  #unsent = "";
  #unsentCount = 0;
  /** Unanswered payloads past which new ones gather before they are written. */
  readonly #low: number;
  /** Ends a gathering that no verdict has ended. */
  #hold: Deadline | undefined;
  /** The write loop, while it runs. */
  #writing: Promise<void> | undefined;
  /** When the oldest case in flight started its clock. */
  #headSince = 0;
  /** The one deadline of the cases in flight (the spawner's timer, not
   * `setTimeout`, whose first call loads Deno's Node compatibility layer:
   * about 4 ms of a short `score --persistent`). */
  #timer: Deadline | undefined;
  /** Each signal with cases in flight: its listener and how many cases. */
  readonly #aborts = new Map<AbortSignal, Listening>();
  #stderr = "";
  /** Bytes of stderr since the last verdict (or since the process was idle). */
  #stderrBytes = 0;
  readonly #maxStderrBytes: number;
  /** What a cap's error names as raising it, if not the option. */
  readonly #capSetting: string | undefined;
  /** The readers of its stdout and stderr, stopped if they outlast it. */
  readonly #readers: { cancel(): Promise<void> }[] = [];
  #dead: Error | undefined;
  /** The end of stdin, once begun. */
  #ending: Promise<void> | undefined;
  /** Whether stdin is closed or closing: no case may be asked any more. */
  #closing = false;
  /** A last verdict line without its newline, until the exit says what it is. */
  #tail: Line | undefined;
  readonly done: Promise<void>;

  /**
   * Starts `cmd`; `verdicts` turns a verdict line into the case's Score
   * (or throws the case's error), `settled` is told each time a case ends,
   * `lost` is given the cases a crash or a timeout left unanswered, and
   * `surplus` is told of each line that came when no case was waiting.
   */
  constructor(
    cmd: string,
    cwd: string,
    timeoutMs: number,
    maxLineBytes: number,
    maxStderrBytes: number,
    capSetting: string | undefined,
    inFlight: number,
    verdicts: Verdicts,
    settled: () => void,
    lost: Lost,
    surplus: () => void,
  ) {
    this.#low = Math.max(1, inFlight >> 1);
    this.#cmd = cmd;
    this.#label = `scorer ${JSON.stringify(cmd)}`;
    this.#timeoutMs = timeoutMs;
    this.#maxStderrBytes = maxStderrBytes;
    this.#capSetting = capSetting;
    this.#verdicts = verdicts;
    this.#settled = settled;
    this.#lost = lost;
    this.#surplus = surplus;
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
    const reading = this.#readVerdicts(maxLineBytes);
    const errors = this.#readStderr();
    this.done = Promise.all([
      reading,
      errors,
      // Settles once it has exited and what it left behind has been killed.
      this.#child.status.then(async (status) => {
        // The exit can be seen before the pipes are drained: the verdicts it
        // wrote first are still owed to their cases, and stderr says why.
        // A pipe still open once the process is gone is held by something
        // it left in another session (`setsid`): by then what it wrote
        // before its exit has been read (a pipe holds 64 KiB at most), so
        // the reads stop rather than wait for that holder forever.
        const drain = setDeadline(performance.now() + EXIT_DRAIN_MS, () => {
          for (const r of this.#readers) r.cancel().catch(() => {});
        });
        await Promise.allSettled([reading, errors]);
        clearDeadline(drain);
        const how = status.signal !== null
          ? `was killed by ${status.signal}`
          : `exited with status ${status.code}`;
        const stderr = this.#stderr.trim();
        const crash = new SubprocessScorerError(
          `${this.#label} ${how}${
            this.#ending === undefined ? "" : this.#unanswered()
          }${stderr === "" ? "" : `: ${stderr}`}`,
          "scorer.exit_status",
        );
        // Unless a kill already ended them: the case it owed its next
        // verdict gets the crash, and those behind it go to a new process;
        // after a clean exit, that case too.
        const clean = status.code === 0 && status.signal === null;
        const tail = this.#tail;
        this.#tail = undefined;
        if (clean && tail !== undefined && this.#dead === undefined) {
          this.#answer(tail, performance.now());
        }
        const head = this.#dead === undefined && !clean
          ? this.#pending.shift()
          : undefined;
        if (head !== undefined) {
          this.#chars -= head.payload.length;
          this.#reject(head, crash);
        }
        this.#fail(crash, true);
      }),
    ]).then(() => {});
  }

  /** Whether the process can take cases: running, its stdin still open. */
  get alive(): boolean {
    return this.#dead === undefined && !this.#closing;
  }

  get busy(): number {
    return this.#pending.length;
  }

  /** Characters of payload in flight. */
  get chars(): number {
    return this.#chars;
  }

  async #readVerdicts(maxLineBytes: number): Promise<void> {
    const splitter = new LineSplitter(maxLineBytes);
    const lines: Line[] = [];
    // One buffer for every read: the splitter copies what it keeps.
    const reader = this.#child.stdout.getReader({ mode: "byob" });
    this.#readers.push(reader);
    let buffer = new ArrayBuffer(READ_BYTES);
    try {
      for (;;) {
        const { done, value } = await reader.read(new Uint8Array(buffer));
        if (done || value === undefined) break;
        buffer = value.buffer as ArrayBuffer;
        splitter.push(value, lines);
        // The verdicts of one read came at once: one clock reading for all.
        const now = performance.now();
        for (let i = 0; i < lines.length; i++) this.#answer(lines[i]!, now);
        lines.length = 0;
      }
    } finally {
      reader.releaseLock();
    }
    // A last line without its newline waits for the exit: after a clean
    // one it is a verdict, after a crash the rest of it never came, and
    // the case it was for gets the crash.
    splitter.end(lines);
    this.#tail = lines[0];
  }

  async #readStderr(): Promise<void> {
    // Keep the last few KiB: enough to explain a crash, never unbounded.
    const reader = this.#child.stderr.getReader();
    this.#readers.push(reader);
    // Its own decoder, streaming: a character whose bytes come in two
    // reads is one character, not two U+FFFD.
    const text = new TextDecoder();
    try {
      for (;;) {
        // Stdout catches up before each read: reads of a stderr that always
        // has more (a scorer logging all along) complete without a turn of
        // the event loop and would hold back the verdicts, and the logs of
        // every case behind them would count against the case owed next.
        // So these bytes are at most what a pipe holds of other cases' logs.
        await caughtUp();
        const { done, value } = await reader.read();
        if (done) break;
        this.#stderr = (this.#stderr + text.decode(value, { stream: true }))
          .slice(-4096);
        this.#stderrBytes += value.byteLength;
        // The per-case mode's cap, per case: a long-lived process's logs
        // over many cases are no fault, one case's flood is. What came
        // since the verdict before it counts against the case owed next.
        if (
          this.#stderrBytes > this.#maxStderrBytes &&
          this.#pending.length > 0 && this.#dead === undefined
        ) {
          this.#drop(
            new SubprocessScorerError(
              `${this.#label} printed more than ${this.#maxStderrBytes} bytes on stderr${
                capNote(this.#capSetting ?? "maxStderrBytes")
              }`,
              "scorer.output_cap",
            ),
            "another case printed more than its stderr cap",
          );
        }
      }
    } finally {
      reader.releaseLock();
    }
  }

  #answer(line: Line, now: number): void {
    // No verdict is blank: a stray print() answers no case, and taking it
    // for one would hand every later case the verdict of the one before.
    if (line.error === undefined && line.text.trim() === "") return;
    const pending = this.#pending.shift();
    if (pending === undefined) {
      // A line no case was waiting for: a banner, or a verdict written twice,
      // before it gave each case after it the verdict of the one before.
      // Counted, to be told; not one read after a kill, whose cases went
      // elsewhere.
      if (this.#dead === undefined) this.#surplus();
      return;
    }
    this.#answered = true;
    this.#chars -= pending.payload.length;
    // Verdicts come in order, so the next case's time starts now: the cases
    // queued behind a slow one do not spend their timeout waiting (nor its
    // stderr cap).
    if (this.#pending.length > 0) this.#headSince = now;
    this.#stderrBytes = 0;
    if (this.#unsentCount > 0) this.#push();
    // Invalid UTF-8 is read as the per-case mode reads it, each bad byte a
    // U+FFFD and a warning, so that both modes give a case the same Score.
    if (line.error !== undefined && line.error !== INVALID_UTF8) {
      // Past the cap, as the per-case mode names it: the cap, not the verdict.
      const capped = line.error.startsWith(TOO_LONG);
      this.#reject(
        pending,
        new SubprocessScorerError(
          capped
            ? `${this.#label} printed a verdict line of more than ${
              line.error.slice(TOO_LONG.length, -" bytes".length)
            } bytes on stdout${capNote(this.#capSetting ?? "maxLineBytes")}`
            : `${this.#label} printed an unreadable verdict line: ${line.error}`,
          capped ? "scorer.output_cap" : "scorer.invalid_verdict",
        ),
      );
      return;
    }
    let score: Score;
    try {
      score = this.#verdicts.score(line.text, pending.unit);
      if (line.error === INVALID_UTF8) {
        score.diagnostics.push(notUtf8Warning(this.#cmd));
      }
    } catch (failure) {
      // The case's own failure (a verdict the protocol refuses, an error
      // line): its error Score, not the end of the read loop.
      if (!(failure instanceof Error)) throw failure;
      this.#reject(pending, failure);
      return;
    }
    pending.resolve(pending.unit === undefined ? score : [score]);
    this.#ended(pending);
  }

  /** Ends a case with its error, and what listened for it. */
  #reject(pending: Pending, error: Error): void {
    failCase(pending, error, this.#verdicts);
    this.#ended(pending);
  }

  /** After a case has its Score or error: its signal and a waiting case. */
  #ended(pending: Pending): void {
    const signal = pending.signal;
    if (signal !== undefined) {
      const listening = this.#aborts.get(signal);
      if (listening !== undefined && --listening.cases === 0) {
        // No case of that run is left: nothing to listen for, nothing kept.
        signal.removeEventListener("abort", listening.onAbort);
        this.#aborts.delete(signal);
      }
    }
    this.#settled();
  }

  /**
   * The one deadline timer: it fires at most once per timeout, and re-arms
   * itself for whatever time the oldest case in flight has left.
   */
  #arm(): void {
    if (this.#timer === undefined && this.#dead === undefined) {
      this.#timer = setDeadline(
        performance.now() + this.#timeoutMs,
        this.#expire,
      );
    }
  }

  readonly #expire = (): void => {
    this.#timer = undefined;
    const head = this.#pending[0];
    if (head === undefined) return; // idle: the next case arms it again
    const left = this.#headSince + this.#timeoutMs - performance.now();
    if (left > 0) {
      this.#timer = setDeadline(performance.now() + left, this.#expire);
      return;
    }
    // Overdue by the clock, yet its verdict may be in the pipe, unread: this
    // process was busy (a loaded machine) and the timer came first. Stdout
    // catches up before the case is called timed out.
    this.#timer = setDeadline(performance.now() + QUIET_MS, () => {
      this.#timer = undefined;
      if (this.#pending[0] !== head) this.#arm(); // answered: the next runs
      else this.#timedOut();
    });
  };

  /**
   * What a process that gave no verdict may have got wrong: a per-case
   * scorer (EvalCore's) reads its stdin to its end, which in this mode comes
   * only after the last case (its first case times out), and then with every
   * payload at once (it crashes on reading them as one document).
   */
  #unanswered(): string {
    return this.#answered ? "" : UNANSWERED;
  }

  /** Ends the case owed next as timed out; the process goes with it. */
  #timedOut(): void {
    this.#drop(
      new SubprocessScorerError(
        `${this.#label} timed out after ${
          this.#timeoutMs / 1000
        } s (its process group was killed)${this.#unanswered()}`,
        "scorer.timeout",
      ),
      "another case timed out",
    );
  }

  /**
   * Ends the oldest case in flight with `error` and kills the process; the
   * others in flight go to a new process, or end with its restart (`why`).
   */
  #drop(error: Error, why: string): void {
    const head = this.#pending.shift();
    if (head === undefined) return;
    this.#chars -= head.payload.length;
    this.#reject(head, error);
    this.kill(
      new SubprocessScorerError(
        `${this.#label} was restarted: ${why}`,
        "scorer.interrupted",
      ),
      true,
    );
  }

  /**
   * Ends the process's cases in flight: with `error`, or with `resend` handed
   * to `lost`, which sends them again or ends them with `error`.
   */
  #fail(error: Error, resend = false): void {
    this.#dead ??= error;
    if (this.#timer !== undefined) clearDeadline(this.#timer);
    this.#timer = undefined;
    if (this.#hold !== undefined) clearDeadline(this.#hold);
    this.#hold = undefined;
    this.#unsent = "";
    this.#unsentCount = 0;
    for (const [signal, { onAbort }] of this.#aborts) {
      signal.removeEventListener("abort", onAbort);
    }
    this.#aborts.clear();
    const cases = this.#pending.splice(0);
    this.#chars = 0;
    if (resend && cases.length > 0) {
      this.#lost(cases, error, this.#ending !== undefined, this.#answered);
      return;
    }
    for (const pending of cases) {
      failCase(pending, error, this.#verdicts);
      this.#settled();
    }
  }

  /**
   * Kills the process group; cases in flight fail with `error`, or with
   * `resend` are handed to `lost` (see the module doc).
   */
  kill(error: Error, resend = false): void {
    this.#fail(error, resend);
    this.#child.kill();
  }

  /**
   * Sends the payload of the case `pending` (with the others ready in the
   * same turn, in one write).
   */
  ask(pending: Pending): void {
    if (this.#dead !== undefined) {
      failCase(pending, this.#dead, this.#verdicts);
      return;
    }
    const signal = pending.signal;
    if (signal !== undefined) {
      (this.#aborts.get(signal) ?? this.#listen(signal)).cases++;
    }
    if (this.#pending.length === 0) {
      this.#headSince = performance.now();
      this.#stderrBytes = 0;
    }
    this.#pending.push(pending);
    this.#chars += pending.payload.length;
    this.#arm();
    this.#unsent += `${pending.payload}\n`;
    this.#unsentCount++;
    this.#push();
  }

  /** Kills the process when `signal` aborts while one of its cases is in flight. */
  #listen(signal: AbortSignal): Listening {
    // Listened to while one of its cases is in flight: as long as the work
    // comes steadily, once for the whole run rather than once per case.
    const onAbort = () =>
      this.kill(
        new SubprocessScorerError(
          `${this.#label} was interrupted`,
          "scorer.interrupted",
        ),
      );
    const listening = { onAbort, cases: 0 };
    this.#aborts.set(signal, listening);
    signal.addEventListener("abort", onAbort, { once: true });
    return listening;
  }

  /**
   * Starts writing the unsent payloads, unless the process still has more
   * than half of `inFlight` unanswered: then they gather while its verdicts
   * keep coming, and go out in one write once it has answered enough, or
   * once it has been quiet for a millisecond. A process that answers quickly
   * then reads many payloads per read, as it would from a file, instead of
   * waking for each; one that answers slowly, or only once it has read more,
   * gets them a millisecond after its last verdict.
   */
  #push(): void {
    if (this.#writing !== undefined || this.#unsent === "") return;
    if (this.#pending.length - this.#unsentCount > this.#low) {
      this.#hold ??= setDeadline(performance.now() + QUIET_MS, this.#quiet);
      return;
    }
    this.#writing = this.#write();
  }

  /** The gathering's timer: ends it once no verdict came for `QUIET_MS`. */
  readonly #quiet = (): void => {
    this.#hold = undefined;
    if (this.#writing !== undefined || this.#unsent === "") return;
    // With payloads unsent, the clock of the oldest case started at the
    // last verdict.
    const since = performance.now() - this.#headSince;
    if (since < QUIET_MS) {
      this.#hold = setDeadline(
        performance.now() + QUIET_MS - since,
        this.#quiet,
      );
    } else this.#flush();
  };

  /** Writes the unsent payloads now. */
  #flush(): void {
    if (this.#hold !== undefined) clearDeadline(this.#hold);
    this.#hold = undefined;
    if (this.#writing === undefined && this.#unsent !== "") {
      this.#writing = this.#write();
    }
  }

  /**
   * Writes what is unsent until nothing is: the payloads that come while a
   * write is under way go out together in the next.
   */
  async #write(): Promise<void> {
    // After the microtasks of this turn, so that the cases started together
    // leave together.
    await undefined;
    if (this.#hold !== undefined) clearDeadline(this.#hold);
    this.#hold = undefined;
    try {
      while (this.#unsent !== "" && this.#dead === undefined) {
        const text = this.#unsent;
        this.#unsent = "";
        this.#unsentCount = 0;
        await this.#writer.write(encoder.encode(text));
      }
    } catch (error) {
      // A broken pipe: the process died before it read these payloads, and
      // its exit says why. Anything else: give up on this process, so that
      // the cases in flight are settled (by the kill) rather than left
      // hanging.
      if (!(error instanceof Deno.errors.BrokenPipe)) {
        this.kill(
          new SubprocessScorerError(
            `${this.#label} could not be written to: ${error}`,
          ),
        );
      }
      this.#unsent = "";
      this.#unsentCount = 0;
    } finally {
      this.#writing = undefined;
    }
  }

  /**
   * Writes what is unsent, then closes stdin: no case will come, and the
   * process may finish once it has answered.
   */
  endInput(): Promise<void> {
    this.#ending ??= (async () => {
      // The end of the cases can be told just before the last of them is
      // asked, in the same turn: stdin ends after every payload asked by
      // then, and after those of the writes they were gathered into.
      await undefined;
      for (;;) {
        this.#flush();
        if (this.#writing === undefined) break;
        await this.#writing;
      }
      this.#closing = true;
      await this.#writer.close().catch((error) => {
        // Already closed by a crash: nothing more to say to it.
        if (
          !(error instanceof Deno.errors.BrokenPipe ||
            error instanceof TypeError)
        ) throw error;
      });
    })();
    return this.#ending;
  }

  /** Closes stdin so the process can finish, then makes sure it has. */
  async close(): Promise<void> {
    await this.endInput();
    const grace = setDeadline(
      performance.now() + 2000,
      () =>
        this.kill(
          new SubprocessScorerError(
            `${this.#label} was stopped`,
            "scorer.interrupted",
          ),
        ),
    );
    await this.done;
    clearDeadline(grace);
  }
}

/**
 * A subprocess scorer in persistent mode (see the module doc). Its metric
 * name and `evaluator_version` are those the per-case mode would give the
 * same command. Call `close()` when done: it ends the process. Then
 * `surplusLines()` says how many lines came when no case was waiting: above
 * 0, its verdicts were likely shifted onto later cases.
 *
 * @param cmd The command, run via `sh -c` in its own process group.
 * @param options Name, folder, timeout and limits.
 * @returns The scorer.
 * @throws {InputError} When the script the command names does not exist,
 *   as a config naming it is refused.
 *
 * @example
 * ```ts
 * import { persistentScorer } from "./persistent_scorer.ts";
 * const s = persistentScorer(`while read -r line; do echo '{"score": 1}'; done`, { name: "always" });
 * const score = await s.score({ example_id: "a#1", unit_id: "a#1", input: "q", output: "a" }, {});
 * await s.close!();
 * if ("scores" in score || score.value !== 1) throw new Error("unexpected");
 * ```
 *
 * @example A banner on stdout shifts the verdicts, and is counted
 * ```ts
 * import { persistentScorer } from "./persistent_scorer.ts";
 * const s = persistentScorer(`echo Loading...; while read -r line; do echo '{"score": 1}'; done`, { name: "loud" });
 * const unit = { example_id: "a#1", unit_id: "a#1", input: "q", output: "a" };
 * // The banner is taken for the first case's verdict.
 * const first = await Promise.resolve(s.score(unit, {})).then(() => "scored", (error: Error) => error.message);
 * await s.close!();
 * if (!first.includes("invalid verdict") || s.surplusLines!() !== 1) throw new Error(first);
 * ```
 */
export function persistentScorer(
  cmd: string,
  options: PersistentScorerOptions = {},
): Scorer {
  const { cwd, name, version, timeout } = subprocessScorerSetup(
    "persistentScorer",
    cmd,
    options,
  );
  const maxLineBytes = options.maxLineBytes ?? 1024 * 1024;
  const maxStderrBytes = options.maxStderrBytes ?? 1024 * 1024;
  const inFlight = Math.max(1, options.inFlight ?? 1024);
  const inFlightChars = options.inFlightChars ?? 16 * 1024 * 1024;
  const label = `scorer ${JSON.stringify(cmd)}`;
  let worker: Worker | undefined;
  const waiting: Array<() => void> = [];
  const retired: Worker[] = [];
  // The pipeline's failure, as the unit path was last given it (one
  // function for every case: `scoreUnits`' own).
  let failure: Failure | undefined;
  const verdicts: Verdicts = {
    score(line: string, unit: Unit | undefined): Score {
      const error = perCaseError(line);
      if (error !== undefined) {
        throw new SubprocessScorerError(
          `${label} reported: ${error}`,
          "scorer.reported",
        );
      }
      const verdict = parseVerdict(cmd, line);
      if (unit === undefined) return scoreFromVerdict(name, version, verdict);
      // What checkScores would make of scoreFromVerdict's Score, built once:
      // the verdict was checked as it was read, the metric and version when
      // the scorer was made.
      const value = verdict.score === 0 ? 0 : verdict.score; // -0 is written 0
      return unitScore(
        name,
        "scored",
        "valid",
        value,
        verdict.passed ?? value >= 0.5,
        verdict.reason,
        version,
        unit,
      );
    },
    failed: (error: Error, unit: Unit): Score[] => failure!(self, error, unit),
  };
  // Each case that ends lets one that waits for room go.
  const settled = () => waiting.shift()?.();
  // Lines that came when no case was waiting, from every process.
  let surplus = 0;
  const surplusLine = () => {
    surplus++;
  };
  // While close() runs, no process may start: it would outlive it.
  let closed = false;
  /**
   * The cases a crash or a timeout left unanswered, in order: each goes to a
   * new process, unless this is the second process that lost it without
   * answering anything (a scorer that cannot start), its run was
   * interrupted, or close() has begun: then it ends with `error`; when no
   * process can be started, with the spawn failure.
   */
  const lost: Lost = (cases, error, ended, answered) => {
    let to: Worker | undefined;
    let unstarted: Error | undefined;
    for (const pending of cases) {
      if (!answered) pending.barren++;
      let why: Error | undefined = pending.barren >= 2 || closed ||
          pending.signal?.aborted === true
        ? error
        : unstarted;
      if (why === undefined && to === undefined) {
        try {
          to = current();
        } catch (failure) {
          if (!(failure instanceof Error)) throw failure;
          why = unstarted = failure;
        }
      }
      if (why !== undefined || to === undefined) {
        failCase(pending, why ?? error, verdicts);
        settled();
        continue;
      }
      to.ask(pending);
    }
    // No case follows these: the new process may see its input end too.
    if (ended) to?.endInput().then(undefined, () => {});
  };
  const current = (): Worker => {
    if (worker === undefined || !worker.alive) {
      if (worker !== undefined) retired.push(worker);
      worker = undefined;
      worker = new Worker(
        cmd,
        cwd,
        timeout * 1000,
        maxLineBytes,
        maxStderrBytes,
        options.capSetting,
        inFlight,
        verdicts,
        settled,
        lost,
        surplusLine,
      );
    }
    return worker;
  };
  const interrupted = () =>
    new SubprocessScorerError(`${label} was interrupted`, "scorer.interrupted");
  /** One promise per case (`score`): the worker settles it with the case's Score. */
  const send = (unit: Unit, signal: AbortSignal | undefined): Promise<Score> =>
    new Promise<Score>((resolve, reject) => {
      // A spawn failure or an unwritable unit: a rejection.
      const to = current();
      to.ask({
        resolve: resolve as (value: Score | Score[]) => void,
        reject,
        signal,
        unit: undefined,
        payload: payloadLine(unit),
        barren: 0,
      });
    });
  const full = () =>
    worker !== undefined && worker.alive &&
    (worker.busy >= inFlight ||
      (worker.busy > 0 && worker.chars >= inFlightChars));
  const wait = async () => {
    while (full()) await new Promise<void>((resolve) => waiting.push(resolve));
  };
  // Cases waiting for room, which the end of the cases must wait for.
  let parked = 0;
  let endOnceSent = false;
  /** A waiting case has been sent (or failed): the end of the cases, if it was put off for it. */
  const unpark = () => {
    if (--parked === 0 && endOnceSent) {
      endOnceSent = false;
      worker?.endInput().then(undefined, () => {});
    }
  };
  const queued = async (unit: Unit, signal?: AbortSignal): Promise<Score> => {
    parked++;
    await wait();
    try {
      if (signal?.aborted) throw interrupted();
      return send(unit, signal);
    } finally {
      unpark();
    }
  };
  /**
   * A unit path's case, sent now: its final Scores at once (a spawn failure
   * or an unwritable unit is the case's own failure), or the case itself, a
   * `Later` the worker settles with them.
   */
  const sendLater = (
    unit: Unit,
    signal: AbortSignal | undefined,
  ): Score[] | Later<Score[]> => {
    let payload: string;
    let to: Worker;
    try {
      to = current();
      payload = payloadLine(unit);
    } catch (error) {
      return failure!(self, error, unit);
    }
    const pending = new PathCase(unit, signal, payload);
    to.ask(pending);
    return pending;
  };
  /** `sendLater` for a caller that takes a promise. */
  const sendPath = (
    unit: Unit,
    signal: AbortSignal | undefined,
  ): Promise<Score[]> => {
    const sent = sendLater(unit, signal);
    if (!(sent instanceof Later)) return Promise.resolve(sent);
    if (sent.done) return Promise.resolve(sent.value!);
    return new Promise((resolve) => {
      sent.onSettle = () => resolve(sent.value!);
    });
  };
  const queuedPath = async (
    unit: Unit,
    signal?: AbortSignal,
  ): Promise<Score[]> => {
    parked++;
    await wait();
    try {
      if (signal?.aborted) return failure!(self, interrupted(), unit);
      return sendPath(unit, signal);
    } finally {
      unpark();
    }
  };
  const score = (unit: Unit, context: ScorerContext): Promise<Score> => {
    const signal = context.signal;
    if (signal?.aborted) return Promise.reject(interrupted());
    return full() ? queued(unit, signal) : send(unit, signal);
  };
  // A script's scorer spread from this one (`{...persistentScorer(cmd),
  // score}`, a new name) carries its paths too: they serve only this one.
  const own = (scorer: Scorer) => scoresAsMade(scorer, score, name, version);
  const self: Scorer & UnitPath & UnitLater & CasesEnd = {
    name,
    version,
    range: UNIT_RANGE,
    score,
    [UNIT_PATH](
      this: Scorer,
      unit: Unit,
      context: ScorerContext,
      failed: Failure,
    ): Promise<Score[]> | undefined {
      if (!own(this)) return undefined;
      failure = failed;
      const signal = context.signal;
      if (signal?.aborted) {
        return Promise.resolve(failed(self, interrupted(), unit));
      }
      return full() ? queuedPath(unit, signal) : sendPath(unit, signal);
    },
    [UNIT_LATER](
      this: Scorer,
      unit: Unit,
      context: ScorerContext,
      failed: Failure,
    ): Score[] | Promise<Score[]> | Later<Score[]> | undefined {
      if (!own(this)) return undefined;
      failure = failed;
      const signal = context.signal;
      if (signal?.aborted) return failed(self, interrupted(), unit);
      return full() ? queuedPath(unit, signal) : sendLater(unit, signal);
    },
    [END_OF_CASES](): void {
      // The cases in flight are the last: their process may see the end of
      // its input now, or once those waiting for room are sent. A failure
      // to close it is close()'s to report, which awaits the same promise.
      if (parked > 0) endOnceSent = true;
      else worker?.endInput().then(undefined, () => {});
    },
    surplusLines: () => surplus,
    async close() {
      closed = true;
      const all = [...retired, ...(worker !== undefined ? [worker] : [])];
      worker = undefined;
      retired.length = 0;
      try {
        await Promise.all(all.map((w) => w.close()));
      } finally {
        closed = false;
      }
    },
  };
  if (options.startNow === true) {
    try {
      current();
    } catch (error) {
      // The first case spawns again and gets the failure as its error.
      if (!(error instanceof SubprocessScorerError)) throw error;
    }
  }
  return self;
}

/**
 * The characters besides `\n` that some line readers take for a line's end
 * (Python's `str.splitlines`, Unicode's line breaking), which
 * `JSON.stringify` leaves raw in strings: the other ones it escapes.
 */
const LINE_BREAK = /[\u0085\u2028\u2029]/;
const LINE_BREAKS = new RegExp(LINE_BREAK, "g");

/**
 * A unit's payload as one line whatever reads it: the v0 payload, with NEL,
 * LINE SEPARATOR and PARAGRAPH SEPARATOR escaped (`\u2028`), the same JSON
 * value. They can only stand inside strings, where the escape means them.
 */
function payloadLine(unit: Unit): string {
  const payload = scorerPayload(unit);
  return LINE_BREAK.test(payload)
    ? payload.replace(LINE_BREAKS, escapeBreak)
    : payload;
}

function escapeBreak(c: string): string {
  return `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** The message of a `{"error": "..."}` line, the extension's per-case failure. */
function perCaseError(line: string): string | undefined {
  if (!line.includes('"error"')) return undefined;
  try {
    const value = JSON.parse(line);
    // A message wins over a score beside it: a scorer that writes
    // `{"error": "...", "score": 0}` failed, and its 0 is no measurement.
    if (
      typeof value === "object" && value !== null &&
      typeof value.error === "string" &&
      (value.error !== "" || !("score" in value))
    ) {
      return value.error;
    }
  } catch (error) {
    // Not JSON: parseVerdict reports it in the protocol's words.
    if (!(error instanceof SyntaxError)) throw error;
  }
  return undefined;
}

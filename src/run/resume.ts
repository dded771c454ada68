/**
 * Resuming an interrupted run from its Scores file: what is already there,
 * what was torn, and whether the suite is still the same.
 *
 * @module
 */

import { InputError } from "../base/errors.ts";
import { mappingAt, stringAt } from "../io/fields.ts";
import { fingerprintsAt } from "../record/run_record.ts";
import { LineStream } from "../io/line_stream.ts";
import type { Fingerprints } from "../fingerprint/fingerprint.ts";
import { parseScore, type Score } from "../score/mod.ts";

/**
 * What a run that writes `--out` records beside it, so it can be resumed
 * safely.
 *
 * @example The sidecar `<out>.meta.json`, read back by prepareResume
 * ```ts
 * import { prepareResume, type RunMeta } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const meta: RunMeta = {
 *   run_id: "20261201T080000Z-3f2a9c",
 *   started_at: "2026-12-01T08:00:00.000Z",
 *   fingerprints: { config: "sha256:aa", dataset: "sha256:bb", target: "sha256:cc", scorers: {} },
 * };
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, "");
 * await Deno.writeTextFile(`${dir}/scores.ndjson.meta.json`, JSON.stringify(meta));
 * const plan = await prepareResume(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (plan.meta?.run_id !== meta.run_id) throw new Error("unexpected");
 * ```
 */
export interface RunMeta {
  /** The run that started the file. */
  run_id: string;
  /** When it started. */
  started_at: string;
  /** What it depended on. */
  fingerprints: Fingerprints;
  /**
   * The settings that shape its Scores beyond the config (absent in files
   * written before they were recorded).
   */
  settings?: RunSettings;
}

/**
 * The settings of a run that shape its Scores, whatever the config says: kept
 * beside a Scores file (`<out>.meta.json`), and checked when it is resumed.
 *
 * @example A five-epoch run's file cannot be continued with one epoch
 * ```ts
 * import { prepareResume, ResumeError, type RunSettings } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * import { checkResumeSettings } from "./resume.ts";
 * const dir = await Deno.makeTempDir();
 * const out = `${dir}/s.ndjson`;
 * await Deno.writeTextFile(out, scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1@1" })) + "\n");
 * const settings: RunSettings = { epochs: 5 };
 * await Deno.writeTextFile(`${out}.meta.json`, JSON.stringify({
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", settings,
 *   fingerprints: { config: "sha256:a", dataset: "sha256:b", target: "sha256:c", scorers: { m: "m@1" } },
 * }));
 * const plan = await prepareResume(out);
 * let refused = false;
 * try {
 *   checkResumeSettings(plan, { epochs: 1 });
 * } catch (error) {
 *   refused = error instanceof ResumeError && error.message.includes("--epochs 5");
 * }
 * await Deno.remove(dir, { recursive: true });
 * if (!refused) throw new Error("unexpected");
 * ```
 */
export interface RunSettings {
  /** How many times each example runs: it names the units (`#id@k`). */
  epochs: number;
}

/**
 * Refuses to resume a file whose run had other settings that shape Scores
 * (its epochs): the old and new Scores would not be of one run. Unlike a
 * changed config, `--force` cannot override this.
 *
 * @param plan The plan of the file to continue.
 * @param now This run's settings.
 * @throws {ResumeError} Naming the setting, both values and how to resume.
 */
export function checkResumeSettings(plan: ResumePlan, now: RunSettings): void {
  const then = plan.meta?.settings;
  if (plan.scores === 0 || then === undefined) return;
  if (then.epochs !== now.epochs) {
    throw new ResumeError(
      `${JSON.stringify(plan.path)} was started with epochs ${then.epochs}, ` +
        `this run has epochs ${now.epochs}: resume with --epochs ${then.epochs}, or start a new --out`,
    );
  }
}

/**
 * A Scores file that cannot be resumed, or a suite that changed since. Its
 * message names the file (and the line at fault), and the command line exits 2.
 *
 * @example A whole line before the last that is not a Score
 * ```ts
 * import { prepareResume, ResumeError } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, `{"metric":"m"}\n${scoreLine(scored("m", 1, { unit_id: "d#1" }))}\n`);
 * const error = await prepareResume(`${dir}/scores.ndjson`).then(() => undefined, (e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (!(error instanceof ResumeError) || error.exitCode !== 2) throw new Error("unexpected");
 * if (!error.message.startsWith(`"${dir}/scores.ndjson" line 1 is not a Score (`)) throw new Error(error.message);
 * ```
 */
export class ResumeError extends InputError {
  /**
   * Creates the error.
   *
   * @param message What is wrong and what to do.
   */
  constructor(message: string) {
    super(message);
    this.name = "ResumeError";
  }
}

/**
 * What a resumed run needs to know of the file it continues.
 *
 * @example Skip the units whose metrics are already scored
 * ```ts
 * import { prepareResume, type ResumePlan } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n");
 * const plan: ResumePlan = await prepareResume(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * const todo = ["d#1", "d#2"].filter((unit) => !plan.done.get(unit)?.has("m"));
 * if (todo.join() !== "d#2" || plan.meta !== undefined) throw new Error("unexpected");
 * ```
 */
export interface ResumePlan {
  /** The Scores file. */
  path: string;
  /** Metrics already scored, by unit id. */
  done: Map<string, Set<string>>;
  /** Whole Score lines kept. */
  scores: number;
  /** The torn last line that was dropped, if there was one. */
  dropped?: string;
  /** The metadata the run that started the file wrote, if it is there. */
  meta?: RunMeta;
  /** Whether the metadata file is there but cannot be read (only `--force` resumes). */
  damagedMeta?: boolean;
}

/**
 * The sidecar file beside a Scores file that holds its {@linkcode RunMeta}.
 *
 * @param out The Scores file.
 * @returns `<out>.meta.json`.
 */
export function metaPath(out: string): string {
  return `${out}.meta.json`;
}

/**
 * Writes the metadata of a run beside its Scores file.
 *
 * @param out The Scores file.
 * @param meta The run's id, start and fingerprints.
 */
export async function writeMeta(out: string, meta: RunMeta): Promise<void> {
  // Written aside and renamed into place: a run killed meanwhile leaves the
  // old sidecar or the new one, never a torn one.
  const temp = `${metaPath(out)}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(meta, null, 2) + "\n");
  await Deno.rename(temp, metaPath(out));
}

/** The sidecar's metadata; `undefined` when there is none, `null` when it is damaged. */
async function readMeta(out: string): Promise<RunMeta | undefined | null> {
  let text: string;
  try {
    text = await Deno.readTextFile(metaPath(out));
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return undefined;
    throw error;
  }
  try {
    const meta = mappingAt(JSON.parse(text), "");
    const read: RunMeta = {
      run_id: stringAt(meta, "run_id"),
      started_at: stringAt(meta, "started_at"),
      fingerprints: fingerprintsAt(meta),
    };
    if (meta.settings !== undefined) {
      const epochs = mappingAt(meta.settings, "settings").epochs;
      if (!Number.isInteger(epochs) || (epochs as number) < 1) {
        throw new SyntaxError('"settings.epochs" must be a whole number');
      }
      read.settings = { epochs: epochs as number };
    }
    return read;
  } catch (error) {
    // FieldError is a SyntaxError too.
    if (!(error instanceof SyntaxError)) throw error;
    return null;
  }
}

/** Drops a torn last line (no newline at its end): returns what was dropped. */
async function dropTornTail(path: string): Promise<string | undefined> {
  const file = await Deno.open(path, { read: true, write: true });
  try {
    const size = (await file.stat()).size;
    if (size === 0) return undefined;
    // Walk back from the end to the last newline, a block at a time.
    const block = 64 * 1024;
    let end = size;
    let tail = new Uint8Array(0);
    while (end > 0) {
      const start = Math.max(0, end - block);
      const buf = new Uint8Array(end - start);
      await file.seek(start, Deno.SeekMode.Start);
      let read = 0;
      while (read < buf.length) {
        const n = await file.read(buf.subarray(read));
        if (n === null) break;
        read += n;
      }
      const nl = buf.lastIndexOf(10);
      if (nl >= 0) {
        const keep = start + nl + 1;
        if (keep === size) return undefined;
        const dropped = new Uint8Array(size - keep);
        dropped.set(buf.subarray(nl + 1));
        dropped.set(tail, buf.length - nl - 1);
        await file.truncate(keep);
        return new TextDecoder().decode(dropped);
      }
      const joined = new Uint8Array(buf.length + tail.length);
      joined.set(buf);
      joined.set(tail, buf.length);
      tail = joined;
      end = start;
    }
    await file.truncate(0);
    return new TextDecoder().decode(tail);
  } finally {
    file.close();
  }
}

/**
 * Reads a Scores file to resume the run that wrote it: drops a torn last
 * line (truncating the file to its last whole line), and lists the metrics
 * already scored per unit. A file that does not exist yet resumes nothing.
 *
 * @param path The Scores file (`--out`).
 * @returns The plan.
 * @throws {ResumeError} When a line before the last is not a Score.
 *
 * @example A run killed mid-line: the torn line is dropped from the file
 * ```ts
 * import { prepareResume } from "./mod.ts";
 * import { scored, scoreLine } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const whole = scoreLine(scored("m", 1, { example_id: "d#1", unit_id: "d#1" })) + "\n";
 * await Deno.writeTextFile(`${dir}/scores.ndjson`, whole + '{"metric":"m","sta');
 * const plan = await prepareResume(`${dir}/scores.ndjson`);
 * const text = await Deno.readTextFile(`${dir}/scores.ndjson`);
 * await Deno.remove(dir, { recursive: true });
 * if (plan.scores !== 1 || plan.dropped !== '{"metric":"m","sta' || text !== whole) throw new Error("unexpected");
 * ```
 */
export async function prepareResume(path: string): Promise<ResumePlan> {
  const done = new Map<string, Set<string>>();
  let dropped: string | undefined;
  try {
    dropped = await dropTornTail(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { path, done, scores: 0 };
    throw error;
  }
  let scores = 0;
  for await (const score of readScoreLines(path)) {
    if (score.unit_id === undefined) {
      throw new ResumeError(
        `${
          JSON.stringify(path)
        } holds a Score without a unit_id; it cannot be resumed`,
      );
    }
    let metrics = done.get(score.unit_id);
    if (metrics === undefined) done.set(score.unit_id, metrics = new Set());
    metrics.add(score.metric);
    scores++;
  }
  const meta = await readMeta(path);
  return {
    path,
    done,
    scores,
    ...(dropped !== undefined ? { dropped } : {}),
    ...(meta !== undefined && meta !== null ? { meta } : {}),
    ...(meta === null ? { damagedMeta: true } : {}),
  };
}

/**
 * Streams the Scores of an NDJSON file (all lines whole).
 *
 * @param path The file.
 * @returns The Scores, in file order.
 * @throws {ResumeError} Naming the first line that is not a Score.
 */
export async function* readScoreLines(path: string): AsyncGenerator<Score> {
  const file = await Deno.open(path);
  for await (const line of file.readable.pipeThrough(new LineStream())) {
    if (line.text.trim() === "" && line.error === undefined) continue;
    try {
      if (line.error !== undefined) throw new SyntaxError(line.error);
      yield parseScore(JSON.parse(line.text));
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      throw new ResumeError(
        `${
          JSON.stringify(path)
        } line ${line.line} is not a Score (${error.message}); it cannot be resumed`,
      );
    }
  }
}

/**
 * Checks that a resumed run measures the same thing as the one that started
 * the file: the same config text and dataset bytes.
 *
 * @param plan The plan, with the file's metadata.
 * @param now The fingerprints of the run about to resume.
 * @throws {ResumeError} When the metadata is missing or damaged, or a
 * fingerprint changed.
 */
export function checkResume(plan: ResumePlan, now: Fingerprints): void {
  const meta = plan.meta;
  // No Scores yet: nothing to mix, the run starts the file afresh.
  if (plan.scores === 0) return;
  if (plan.damagedMeta) {
    throw new ResumeError(
      `${
        JSON.stringify(metaPath(plan.path))
      } is damaged; resume with --force to ignore it`,
    );
  }
  if (meta === undefined) {
    throw new ResumeError(
      `${
        JSON.stringify(metaPath(plan.path))
      } is missing, so nothing shows that the config and dataset are ` +
        "unchanged; resume with --force to continue anyway",
    );
  }
  const changed = [
    ...(meta.fingerprints.config !== now.config ? ["the config"] : []),
    ...(meta.fingerprints.dataset !== now.dataset ? ["the dataset"] : []),
  ];
  if (changed.length > 0) {
    throw new ResumeError(
      `${changed.join(" and ")} changed since ${
        JSON.stringify(plan.path)
      } was started ` +
        `(run ${meta.run_id}); its Scores would mix two suites. Start a new --out, or resume with --force`,
    );
  }
}

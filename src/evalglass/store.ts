/**
 * Writing an evalglass run directory, as evalglass's filesystem result store
 * lays it out: `<dir>/<run id>/` holding `runrecord.json`, `scorecard.json`,
 * `manifest.json` (the SHA-256 of each) and, last, `run.complete` (the
 * manifest's SHA-256), each written to a temporary file and renamed into
 * place, readable by its owner only.
 *
 * @module
 */

import {
  InputError,
  isOsError,
  osErrorText,
  outputErrorOf,
} from "../base/errors.ts";
import type { RunRecord } from "../record/run_record.ts";
import type { Score } from "../score/types.ts";
import {
  refuseChangedRecord,
  type RunRecordSummary,
  visitRunRecord,
} from "../record/record_entries.ts";
import { pythonJson, pythonJsonAt } from "./_python_json.ts";
import {
  type EvalglassHead,
  evalglassScore,
  EvalglassTally,
} from "./export.ts";

/**
 * Where {@linkcode writeEvalglassRun} put a run.
 *
 * @example
 * ```ts
 * import type { EvalglassRunPaths } from "./mod.ts";
 * const paths: EvalglassRunPaths = { runDir: "out/r1", runrecord: "out/r1/runrecord.json", scorecard: "out/r1/scorecard.json" };
 * if (!paths.runrecord.startsWith(paths.runDir)) throw new Error("unexpected");
 * ```
 */
export interface EvalglassRunPaths {
  /** The run's folder: the output folder and the sanitized run id. */
  runDir: string;
  /** Its `runrecord.json`, what `evalglass view --record` and `baseline update --from` take. */
  runrecord: string;
  /** Its `scorecard.json`. */
  scorecard: string;
}

/** The manifest's schema name, as evalglass writes it. */
const MANIFEST_SCHEMA = "evalglass.run-manifest/1";

/**
 * The folder name evalglass gives a run id: runs of characters other than
 * letters, digits, `.`, `_` and `-` become `_`, leading and trailing `.`
 * and `_` go, and an id left empty is `run`.
 *
 * @param runId The run id.
 * @returns A name that cannot leave its parent folder.
 *
 * @example
 * ```ts
 * import { evalglassRunDirName } from "./mod.ts";
 * if (evalglassRunDirName("../a b/c") !== "a_b_c") throw new Error(evalglassRunDirName("../a b/c"));
 * if (evalglassRunDirName("..") !== "run") throw new Error("unexpected");
 * ```
 */
export function evalglassRunDirName(runId: string): string {
  return runId.replace(/[^A-Za-z0-9._-]+/g, "_").replace(
    /^[._]+|[._]+$/g,
    "",
  ) ||
    "run";
}

/** A sink for text, awaited for backpressure. */
type Put = (text: string) => Promise<void>;

/**
 * Writes what `write` puts to `path` by way of a new temporary file beside
 * it, synced and renamed over `path`: a reader sees the old file or the new
 * one, and a symlink at `path` is replaced, not followed. The text goes to
 * the disk a mebibyte at a time, never held whole.
 *
 * @returns The SHA-256 (hex) of what was written.
 */
async function atomicWrite(
  path: string,
  write: (put: Put) => Promise<void>,
): Promise<string> {
  const slash = path.lastIndexOf("/");
  const suffix = crypto.getRandomValues(new Uint32Array(1))[0]!.toString(16);
  const tmp = `${path.slice(0, slash + 1)}.${
    path.slice(slash + 1)
  }.${suffix}.tmp`;
  // The native hash, incremental: what is written is never held whole.
  const { createHash } = await import("node:crypto");
  const hash = createHash("sha256");
  // createNew: a file (or symlink) already at the temporary name is refused.
  const file = await Deno.open(tmp, {
    write: true,
    createNew: true,
    mode: 0o600,
  });
  let written = false;
  try {
    const encoder = new TextEncoder();
    let pending = "";
    const flush = async () => {
      const bytes = encoder.encode(pending);
      pending = "";
      hash.update(bytes);
      let written = 0;
      while (written < bytes.length) {
        written += await file.write(bytes.subarray(written));
      }
    };
    await write(async (text) => {
      pending += text;
      if (pending.length >= 1 << 20) await flush();
    });
    await flush();
    await file.sync();
    written = true;
  } finally {
    file.close();
    // A write that failed (a record that changed as it was read, a full
    // disk) leaves no temporary file behind.
    if (!written) await removeTemporary(tmp);
  }
  try {
    await Deno.chmod(tmp, 0o600);
    await Deno.rename(tmp, path);
  } catch (error) {
    await removeTemporary(tmp);
    throw error;
  }
  return hash.digest("hex");
}

/** Removes a temporary file whose write or rename failed. */
async function removeTemporary(tmp: string): Promise<void> {
  await Deno.remove(tmp).catch((cleanup) => {
    // The write's or the rename's error is the one to report; a temporary
    // file already gone is what we wanted.
    if (!(cleanup instanceof Deno.errors.NotFound)) throw cleanup;
  });
}

/** Writes one text whole, as {@linkcode atomicWrite} does. */
function atomicWriteText(path: string, text: string): Promise<string> {
  return atomicWrite(path, (put) => put(text));
}

/** Whether `path` is a symlink; `false` when nothing is there. */
async function isSymlink(path: string): Promise<boolean> {
  try {
    return (await Deno.lstat(path)).isSymlink;
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return false;
    throw error;
  }
}

/**
 * Exports an evalpipe RunRecord as an evalglass run directory under `dir`
 * (created when missing), named by the run id as evalglass names it.
 * Writing it again replaces it: the completion marker goes first and comes
 * back last, so a half-written run never looks complete.
 *
 * @param dir The output folder (evalglass's reports folder).
 * @param record The evalpipe RunRecord.
 * @returns Where the files are.
 * @throws {InputError} When the run folder would be a symlink or cannot be written.
 *
 * @example Export a run, then check its completion marker against its manifest
 * ```ts
 * import { writeEvalglassRun } from "./mod.ts";
 * import { parseRunRecord } from "../record/mod.ts";
 * const record = parseRunRecord(JSON.stringify({
 *   evalpipe_run_record: 1, run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 *   scores: [], aggregates: [], finished_at: "2026-12-01T08:00:01.000Z", complete: true,
 * }), "run.json");
 * const dir = await Deno.makeTempDir();
 * const paths = await writeEvalglassRun(dir, record);
 * const manifest = await Deno.readFile(`${paths.runDir}/manifest.json`);
 * const digest = [...new Uint8Array(await crypto.subtle.digest("SHA-256", manifest))]
 *   .map((b) => b.toString(16).padStart(2, "0")).join("");
 * const marker = await Deno.readTextFile(`${paths.runDir}/run.complete`);
 * await Deno.remove(dir, { recursive: true });
 * if (marker !== `${digest}\n`) throw new Error("unexpected");
 * ```
 */
export async function writeEvalglassRun(
  dir: string,
  record: RunRecord,
): Promise<EvalglassRunPaths> {
  const tally = new EvalglassTally();
  for (const s of record.scores) tally.add(s);
  const head = await tally.finish(record);
  return await writeRunFiles(dir, head, async (put) => {
    for (const s of record.scores) await put(s);
  });
}

/**
 * Exports the RunRecord file at `path` as {@linkcode writeEvalglassRun}
 * exports a record, reading the file twice (once for the Scorecard, once
 * for the Scores it writes) and never holding its units or Scores: a record
 * of any size is exported in memory that grows with its examples only. A
 * record a run is still writing is exported as the first read found it.
 *
 * @param dir The output folder (evalglass's reports folder).
 * @param path The RunRecord file (`run --record`).
 * @returns Where the files are, and the record besides its units and Scores.
 * @throws {InputError} When the run folder would be a symlink or cannot be written.
 * @throws {RunRecordError} When the record cannot be read, or was replaced
 *   between the two reads.
 *
 * @example Export a record file
 * ```ts
 * import { writeEvalglassRunFile } from "./mod.ts";
 * import { RunRecordWriter } from "../record/mod.ts";
 * import { scored } from "../score/mod.ts";
 * const dir = await Deno.makeTempDir();
 * const file = await Deno.open(`${dir}/run.json`, { write: true, create: true });
 * const writer = new RunRecordWriter(file, {
 *   run_id: "r1", started_at: "2026-12-01T08:00:00.000Z", config_path: "evalpipe.yaml", config: {},
 *   fingerprints: { config: "sha256:aa", dataset: null, target: "sha256:cc", scorers: {} },
 * });
 * await writer.add(scored("m", 1, { example_id: "d#1", unit_id: "d#1" }));
 * await writer.finish([], true);
 * file.close();
 * const { paths, record } = await writeEvalglassRunFile(`${dir}/reports`, `${dir}/run.json`);
 * const text = await Deno.readTextFile(paths.runrecord);
 * await Deno.remove(dir, { recursive: true });
 * if (!record.complete || !text.includes('"unit_id": "d#1"')) throw new Error("unexpected");
 * ```
 */
export async function writeEvalglassRunFile(
  dir: string,
  path: string,
): Promise<{ paths: EvalglassRunPaths; record: RunRecordSummary }> {
  const tally = new EvalglassTally();
  let counted = 0;
  const record = await visitRunRecord(path, {
    entry(scores) {
      for (const s of scores) tally.add(s);
      counted += scores.length;
    },
  });
  const head = await tally.finish(record);
  const paths = await writeRunFiles(dir, head, async (put) => {
    // A record a run is still writing has grown since the first read: the
    // Scores written are those the Scorecard counts, the first `counted`.
    let left = counted;
    const again = await visitRunRecord(path, {
      async entry(scores) {
        for (const s of scores) {
          if (left === 0) return;
          left--;
          await put(s);
        }
      },
    });
    refuseChangedRecord(
      path,
      record.run_id,
      again,
      left,
      "Cannot export",
      "export it again",
    );
  });
  return { paths, record };
}

/**
 * Writes the run folder: `runrecord.json` (the head, then each Score `scores`
 * puts, in evalglass's shape), `scorecard.json`, the manifest, the marker.
 */
async function writeRunFiles(
  dir: string,
  head: EvalglassHead,
  scores: (put: (score: Score) => Promise<void>) => Promise<void>,
): Promise<EvalglassRunPaths> {
  const { scorecard } = head;
  const base = dir.replace(/\/+$/, "") || "/";
  const runDir = `${base === "/" ? "" : base}/${
    evalglassRunDirName(head.run_id)
  }`;
  try {
    if (await isSymlink(runDir)) {
      throw new InputError(
        `Refusing to write through the symlink ${JSON.stringify(runDir)}`,
      );
    }
    await Deno.mkdir(runDir, { recursive: true, mode: 0o700 });
    const [real, realBase] = await Promise.all([
      Deno.realPath(runDir),
      Deno.realPath(base),
    ]);
    if (!real.startsWith(`${realBase === "/" ? "" : realBase}/`)) {
      throw new InputError(
        `The run folder ${JSON.stringify(runDir)} is outside ${
          JSON.stringify(dir)
        }`,
      );
    }
    await Deno.remove(`${runDir}/run.complete`).catch((error) => {
      // No marker yet: nothing to withdraw.
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
    const recordHash = await atomicWrite(
      `${runDir}/runrecord.json`,
      async (put) => {
        // As pythonJson writes the whole record: "scores" sorts last, so
        // the rest is written first and each Score after it, one at a time.
        const rest = pythonJson(head);
        await put(`${rest.slice(0, -"\n}\n".length)},\n  "scores": [`);
        let first = true;
        await scores(async (score) => {
          await put(
            `${first ? "" : ","}\n    ${
              pythonJsonAt(evalglassScore(score), "    ")
            }`,
          );
          first = false;
        });
        await put(first ? "]\n}\n" : "\n  ]\n}\n");
      },
    );
    const scorecardHash = await atomicWriteText(
      `${runDir}/scorecard.json`,
      pythonJson(scorecard),
    );
    const manifest = pythonJson({
      schema: MANIFEST_SCHEMA,
      files: {
        "runrecord.json": recordHash,
        "scorecard.json": scorecardHash,
      },
    });
    const manifestHash = await atomicWriteText(
      `${runDir}/manifest.json`,
      manifest,
    );
    await atomicWriteText(`${runDir}/run.complete`, `${manifestHash}\n`);
  } catch (error) {
    if (error instanceof InputError) throw error;
    // A full or read-only disk: exit 3, as for every output.
    const full = outputErrorOf(
      error,
      `the evalglass run ${JSON.stringify(runDir)}`,
    );
    if (full !== undefined) throw full;
    if (isOsError(error)) {
      throw new InputError(
        `Cannot write the evalglass run ${JSON.stringify(runDir)}: ${
          osErrorText(error)
        }`,
      );
    }
    throw error;
  }
  return {
    runDir,
    runrecord: `${runDir}/runrecord.json`,
    scorecard: `${runDir}/scorecard.json`,
  };
}

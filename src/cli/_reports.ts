// The report files `run` and `report` write from a RunRecord: one entry per
// format, so that a format is one more row (and one more flag).

import type { RunRecord } from "../record/run_record.ts";
import type { RunRecordSummary } from "../record/record_entries.ts";
import type { RunFailure } from "../report/run_failures.ts";
import type { FileWriting } from "../io/replace_file.ts";
import type { StringFlag } from "./flags.ts";

/** What a report writer is given: the record's file, or the record read whole. */
export interface ReportInput {
  /** The RunRecord file, read a unit at a time (never whole) for each report. */
  file?: string;
  /** The run, when it was read whole (from a pipe) rather than `file`. */
  record?: RunRecord;
  /** The Markdown, once written: the step summary takes it again. */
  markdown?: string;
  /** The record's file, when it is kept (for the line on the HTML report). */
  recordPath?: string;
  /** Why the run fails besides its gates (a regression, a spent budget), for the Markdown's headline. */
  failures?: readonly RunFailure[];
  /** What the record says besides its units and Scores, once a report read it. */
  summary?: RunRecordSummary;
}

/** A report format: the flag that asks for it, and how to render it. */
export interface ReportFormat {
  /** The flag, without dashes (`junit`). */
  flag: string;
  /** What messages call the file, before its quoted path. */
  name: string;
  /** Writes the file's text, a piece at a time. */
  render(
    input: ReportInput,
    write: Parameters<FileWriting>[0],
  ): Promise<void>;
}

/** The formats, in the order they are written. */
export const REPORT_FORMATS: readonly ReportFormat[] = [
  {
    flag: "junit",
    name: "JUnit report",
    async render(input, write) {
      const { junitReport, junitReportFile } = await import(
        "../report/junit.ts"
      );
      if (input.record !== undefined) {
        await write(junitReport(input.record));
        return;
      }
      input.summary = await junitReportFile(input.file!, write);
    },
  },
  {
    flag: "markdown",
    name: "Markdown report",
    async render(input, write) {
      await write(await markdownOf(input));
    },
  },
];

/** The Markdown of the run, written once. */
async function markdownOf(input: ReportInput): Promise<string> {
  if (input.markdown !== undefined) return input.markdown;
  const { markdownReport, markdownReportFile } = await import(
    "../report/markdown.ts"
  );
  const { record, recordPath, failures } = input;
  const options = {
    ...(recordPath !== undefined ? { recordPath } : {}),
    ...(failures !== undefined ? { failures } : {}),
  };
  if (record !== undefined) {
    input.markdown = markdownReport(record, options);
  } else {
    const read = await markdownReportFile(input.file!, options);
    input.markdown = read.text;
    input.summary = read.record;
  }
  return input.markdown;
}

// The formats' flags, as reportFlags() declares them.
const REPORT_FLAGS = {
  junit: {
    type: "string",
    value: "FILE",
    help:
      "Write JUnit XML to FILE: a test suite for the run, a test case per unit (failure: a metric failed; error: a Score is an error or blocked; the output in system-out)",
  },
  markdown: {
    type: "string",
    value: "FILE",
    help:
      "Write a Markdown summary to FILE: counts by status per metric, the gates, the budget and the comparison with --baseline, the worst failing cases with their reasons",
  },
} as const;

/**
 * The flag declarations of the formats, for a command's flag table; `dash`
 * is what `-` means to each (see {@linkcode StringFlag}).
 */
export function reportFlags<const D extends StringFlag["dash"]>(dash: D) {
  return {
    junit: { ...REPORT_FLAGS.junit, dash },
    markdown: { ...REPORT_FLAGS.markdown, dash },
  } as const;
}

/**
 * Writes `text` to `path` (appends, with `append`). A disk that refuses it is
 * an output error (exit 3), a folder gone or not writable an input error
 * (exit 2), each naming the file as `name` says. A report is replaced whole
 * (replaceFile): a disk that fills up leaves the last one as it was, not a
 * truncated one a CI step would read as this run's.
 */
async function writeReportFile(
  path: string,
  text: string | FileWriting,
  name: string,
  append = false,
): Promise<void> {
  if (!append || typeof text !== "string") {
    const { replaceFile } = await import("../io/replace_file.ts");
    return await replaceFile(path, text, { name });
  }
  const { cannotOpen, InputError, outputErrorOf, writeErrorText } =
    await import("../base/errors.ts");
  const named = `${name} ${JSON.stringify(path)}`;
  try {
    await Deno.writeTextFile(path, text, { append });
  } catch (error) {
    const failure = outputErrorOf(error, named);
    if (failure !== undefined) throw failure;
    if (!cannotOpen(error)) throw error;
    throw new InputError(
      `Cannot write ${named}: ${writeErrorText(error, path)}`,
      { cause: error },
    );
  }
}

/** A report that could not be written. */
export interface LostReport {
  /** The flag that asked for it, as messages name an output: `--junit "j.xml"`. */
  output: string;
  /** Why: a message naming the file, and the exit code it means (3 for a disk that refuses it). */
  error: Error;
}

/**
 * Writes every report a flag asks for, each on its own: one that cannot be
 * written costs that one, and the others are still written.
 *
 * @returns The reports lost, in the order of the formats.
 */
export async function writeReports(
  input: ReportInput,
  files: Readonly<Record<string, string | undefined>>,
): Promise<LostReport[]> {
  const { exitCodeOf } = await import("../base/errors.ts");
  const lost: LostReport[] = [];
  for (const format of REPORT_FORMATS) {
    const path = files[format.flag];
    if (path === undefined) continue;
    try {
      await writeReportFile(
        path,
        (write) => format.render(input, write),
        format.name,
      );
    } catch (error) {
      // A pipe whose reader went away (`--junit /dev/stdout | head`): it
      // took what it wanted, and the others are still written.
      if (error instanceof Deno.errors.BrokenPipe) continue;
      // Anything without an exit code is a bug, not a file lost; a record
      // that cannot be read is the input's fault, as when it was read whole
      // before any report.
      if (exitCodeOf(error) === undefined) throw error;
      const { RunRecordError } = await import("../record/run_record.ts");
      if (error instanceof RunRecordError) throw error;
      lost.push({
        output: `--${format.flag} ${JSON.stringify(path)}`,
        error: error as Error,
      });
    }
  }
  return lost;
}

/**
 * Appends the run's Markdown to the step summary of GitHub Actions, the file
 * `GITHUB_STEP_SUMMARY` names. That file is the runner's, not an output the
 * user asked for: one that cannot be written is a warning, never a usage
 * error, and changes no exit code.
 *
 * @returns The warning to show, naming the variable, or `undefined` once written.
 */
export async function appendStepSummary(
  input: ReportInput,
  path: string,
): Promise<string | undefined> {
  const { exitCodeOf } = await import("../base/errors.ts");
  const text = await markdownOf(input);
  try {
    await writeReportFile(path, text, "GITHUB_STEP_SUMMARY", true);
    return undefined;
  } catch (error) {
    if (exitCodeOf(error) === undefined) throw error;
    return `warning: ${
      (error as Error).message
    }; no step summary (the exit code is unchanged)`;
  }
}

/**
 * Refuses, before anything runs, a report whose folder is missing or is not
 * a folder: the same input error (exit 2) for `run` and `report`. A report the disk refuses later is still an output lost (exit 3).
 */
export async function checkReportFolders(
  files: Readonly<Record<string, string | undefined>>,
): Promise<void> {
  const { InputError, osErrorText } = await import("../base/errors.ts");
  const names: Record<string, string> = {
    html: "HTML report",
    junit: "JUnit report",
    markdown: "Markdown report",
  };
  for (const [flag, path] of Object.entries(files)) {
    if (path === undefined) continue;
    await refuseFolder(names[flag] ?? `--${flag}`, path);
    const name = `${names[flag] ?? `--${flag}`} ${JSON.stringify(path)}`;
    const slash = path.lastIndexOf("/");
    if (slash < 0) continue;
    const folder = path.slice(0, slash) || "/";
    let info: Deno.FileInfo;
    try {
      info = await Deno.stat(folder);
    } catch (error) {
      if (
        !(error instanceof Deno.errors.NotFound ||
          error instanceof Deno.errors.NotADirectory ||
          error instanceof Deno.errors.PermissionDenied)
      ) throw error;
      throw new InputError(
        `Cannot write ${name}: ${
          error instanceof Deno.errors.PermissionDenied
            ? osErrorText(error)
            : "no such folder"
        } ${JSON.stringify(folder)}`,
      );
    }
    if (!info.isDirectory) {
      throw new InputError(
        `Cannot write ${name}: ${JSON.stringify(folder)} is not a folder`,
      );
    }
  }
}

/**
 * Refuses, before anything runs, a file output that names a folder (`--junit
 * /tmp`), a socket, or a path no write can open (a name too long, symlinks
 * that loop): it could only fail once the run is done.
 *
 * @param name What the file is, for the message (`JUnit report`).
 * @param path The path given.
 */
export async function refuseFolder(name: string, path: string): Promise<void> {
  const { cannotOpen, InputError, osErrorText } = await import(
    "../base/errors.ts"
  );
  const info = await Deno.stat(path).catch((error) => {
    // A name too long, symlinks that loop: no write can ever open it. Not
    // there yet is what an output usually is; a path through a file is
    // named by its folder (checkReportFolders).
    if (
      cannotOpen(error) && !(error instanceof Deno.errors.NotFound) &&
      !(error instanceof Deno.errors.NotADirectory)
    ) {
      throw new InputError(
        `Cannot write ${name} ${JSON.stringify(path)}: ${osErrorText(error)}`,
      );
    }
    return undefined;
  });
  if (info?.isDirectory) {
    throw new InputError(
      `Cannot write ${name} ${JSON.stringify(path)}: it is a folder`,
    );
  }
  if (info?.isSocket) {
    // In the words the write would have said it in, after the run.
    const { notAFileText } = await import("../io/_not_a_file.ts");
    const why = await notAFileText(path);
    if (why !== undefined) {
      throw new InputError(
        `Cannot write ${name} ${JSON.stringify(path)}: ${why}`,
      );
    }
  }
}

/** Whether any report is asked for. */
export function wantsReports(
  files: Readonly<Record<string, string | undefined>>,
  stepSummary?: string,
): boolean {
  return stepSummary !== undefined ||
    REPORT_FORMATS.some((f) => files[f.flag] !== undefined);
}

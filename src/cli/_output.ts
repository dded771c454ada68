// What the commands write for people (stderr) and the small helpers they
// share; stdout carries data only.

import { escapeControl, shellWord } from "../base/terminal.ts";
import { writeStderr } from "./_stderr.ts";
import { isOsError } from "../base/errors.ts";

/** Writes a message for people on stderr; text from cases cannot drive the terminal. */
export function say(message: string): void {
  shownLine?.clear();
  const safe = message.split("\n").map(escapeControl).join("\n");
  writeStderr(`${safe}\n`);
}

/**
 * A command line that runs `words` (`["run", "suite.yaml", "--resume"]`) with
 * this evalpipe ({@linkcode selfCommand}), printed to be pasted in the user's
 * shell as it is; when the user's shell is in
 * another folder than this process (`deno task eval` runs in deno.json's
 * folder, and says the shell's in `INIT_CWD`), in a subshell that goes to
 * this one first, where the relative paths among `words` lead.
 */
export function commandLine(words: readonly string[]): string {
  const line = `${selfCommand()} ${words.map(shellWord).join(" ")}`;
  const here = Deno.cwd();
  const shell = envVar("INIT_CWD");
  return shell === undefined || shell === "" || samePlace(shell, here)
    ? line
    : `(cd ${shellWord(here)} && ${line})`;
}

/**
 * How this evalpipe is started, as a command line's first words: `evalpipe`
 * when the first one on `PATH` launches this very program, else this program
 * as `deno run` runs it (a clone, or an older install on `PATH` that would
 * run other code). A report's footer names it; {@linkcode commandLine} puts
 * it before a command's words.
 */
export function selfCommand(): string {
  const main = Deno.mainModule;
  return launches(firstOnPath("evalpipe"), main)
    ? "evalpipe"
    : `deno run -A ${
      shellWord(
        main.startsWith("file:")
          ? decodeURIComponent(new URL(main).pathname)
          : main,
      )
    }`;
}

/** An environment variable, or `undefined` when unset or not permitted. */
function envVar(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch (error) {
    // Run without --allow-env: nothing to read, so nothing is assumed.
    if (!(error instanceof Deno.errors.NotCapable)) throw error;
    return undefined;
  }
}

/** The file the shell runs for `name`: the first on `PATH` that is a file. */
function firstOnPath(name: string): string | undefined {
  for (const dir of (envVar("PATH") ?? "").split(":")) {
    if (dir === "") continue;
    try {
      if (Deno.statSync(`${dir}/${name}`).isFile) return `${dir}/${name}`;
    } catch (error) {
      // Not there, not readable, not a folder: none in this one.
      if (!isOsError(error)) throw error;
    }
  }
  return undefined;
}

/**
 * Whether the launcher at `path` runs `main`: `deno install` writes a
 * script that names the module it runs, as `Deno.mainModule` spells it.
 */
function launches(path: string | undefined, main: string): boolean {
  if (path === undefined) return false;
  try {
    using file = Deno.openSync(path);
    // A launcher is a few lines; a binary of megabytes is not one of ours.
    const head = new Uint8Array(64 * 1024);
    const n = file.readSync(head) ?? 0;
    return new TextDecoder().decode(head.subarray(0, n)).includes(main);
  } catch (error) {
    // Unreadable: nothing shows it is this program.
    if (!isOsError(error)) throw error;
    return false;
  }
}

/** Whether two paths name one folder, links resolved where they can be. */
function samePlace(a: string, b: string): boolean {
  if (a === b) return true;
  try {
    return Deno.realPathSync(a) === Deno.realPathSync(b);
  } catch (error) {
    // Gone or unreadable: the texts differ, so say where to go.
    if (!isOsError(error)) throw error;
    return false;
  }
}

/**
 * Says that a persistent scorer wrote `lines` lines on stdout when no case
 * was waiting for a verdict (`Scorer.surplusLines`): the shift the protocol,
 * which carries no case id, cannot undo.
 */
export function saySurplusLines(scorer: string, lines: number): void {
  say(
    `evalpipe: persistent scorer ${JSON.stringify(scorer)} wrote ${lines} ${
      lines === 1 ? "line" : "lines"
    } on stdout that no case was waiting for: its verdicts were likely shifted onto later cases (a scorer writes its logs to stderr, one verdict line per case)`,
  );
}

/**
 * Whether stdout is a regular file (`> scores.ndjson`), which an input of the
 * command could be; not a terminal, a pipe or /dev/null.
 */
export async function stdoutIsFile(): Promise<boolean> {
  try {
    return (await Deno.stat("/dev/stdout")).isFile;
  } catch (error) {
    // No /dev, or no permission to look (Deno asks for every permission to
    // stat under /dev): nothing shows a file, so none is refused. Anything
    // else is a bug.
    if (!isOsError(error)) throw error;
    return false;
  }
}

/** Whether `error` is a reader that went away (`| head`): the end, not a failure. */
export function isBrokenPipe(error: unknown): boolean {
  return error instanceof Deno.errors.BrokenPipe;
}

/** Writes `text` on stdout; a reader that went away ends it quietly. */
export async function writeStdout(text: string): Promise<void> {
  const [{ TextWriter }, { stdoutWriter }] = await Promise.all([
    import("../io/text_writer.ts"),
    import("../io/stdout.ts"),
  ]);
  try {
    const w = new TextWriter(stdoutWriter());
    w.write(text);
    await w.flush();
  } catch (error) {
    if (!isBrokenPipe(error)) throw error;
  }
}

/** The progress line of a command, and how to end it. */
export interface Progress {
  /** What the run tells the line; absent when stderr is not a terminal. */
  readonly run?: import("../run/progress.ts").RunProgress;
  /** Ends the line: its last frame stays, on a line of its own. */
  done(): void;
}

// The progress line being drawn, if any: a message clears it first, and the
// next frame draws it again below the message.
let shownLine: { clear(): void } | undefined;

/**
 * Whether the terminal says it cannot move the cursor (`TERM=dumb`: Emacs'
 * shell, some CI consoles): a redrawn line would stay there frame after
 * frame, each with the escape codes it cannot act on.
 */
function dumbTerminal(): boolean {
  return Deno.env.get("TERM") === "dumb";
}

/**
 * Whether the environment says it is CI (`CI` set, as GitHub Actions, GitLab
 * CI, Buildkite and Travis set it, and not `false` or `0`): a runner that
 * gives the command a terminal still keeps every frame of a redrawn line in
 * its log, ten a second.
 */
function inCi(): boolean {
  const ci = Deno.env.get("CI");
  return ci !== undefined && ci !== "" && ci !== "false" && ci !== "0";
}

/**
 * The progress line on stderr (done / total, rate, ETA, errors, units in
 * flight, what holds the network calls back), on a terminal only: when
 * stderr is not one, or one that cannot redraw a line (`TERM=dumb`), or the
 * run is in CI (`CI=true`), nothing is drawn and nothing more is loaded. Nor when
 * the Scores go to stdout and stdout is a terminal too: each Score line
 * would land after a frame.
 *
 * @param scoresOnStdout Whether the command writes its Scores to stdout.
 * @returns The line's observer for the run, and `done()`.
 */
export async function progress(scoresOnStdout: boolean): Promise<Progress> {
  if (!Deno.stderr.isTerminal() || dumbTerminal() || inCi()) {
    return { done() {} };
  }
  if (scoresOnStdout && Deno.stdout.isTerminal()) return { done() {} };
  const [{ FlowWatch }, { progressOnStderr }] = await Promise.all([
    import("../net/flow.ts"),
    import("./_progress.ts"),
  ]);
  const line = progressOnStderr(new FlowWatch())!;
  shownLine = line;
  line.begin();
  return {
    run: line,
    done() {
      line.finish();
      if (shownLine === line) shownLine = undefined;
    },
  };
}

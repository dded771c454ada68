/**
 * Loading datasets: JSONL/NDJSON (streamed), JSON arrays, YAML lists, CSV,
 * and NDJSON on stdin, as a stream of examples.
 *
 * @module
 */

import { InputError, osErrorText } from "../base/errors.ts";
import { YAMLException } from "js-yaml";
import {
  loadYaml,
  type LocatedYaml,
  nonFiniteWord,
  parseYaml,
  YamlBombError,
  yamlProblem,
  YamlRefusedError,
} from "../io/yaml.ts";
import {
  type Case,
  CaseError,
  type Example,
  foreignAnswer,
  keepVerbatimExpected,
  keepVerbatimId,
  overflowingNumber,
  parseCase,
} from "./case.ts";
import { attachVerbatimExpected } from "../io/_expected_text.ts";
import {
  appearsTwice,
  elementSpans,
  type JsonShape,
  repeatedKey,
  shapeOf,
  type WalkNotes,
} from "../io/_json_scan.ts";
import type { CsvRecord } from "./_csv.ts";
import { SeenIds } from "./_seen_ids.ts";
import { nfcKey } from "../base/nfc.ts";
import { type Line, LineSplitter } from "../io/line_stream.ts";
import {
  decodeUtf8,
  readUtf8File,
  TextTooLongError,
  Utf8Error,
} from "../io/utf8.ts";
import { namedReads } from "../io/named_reads.ts";

/**
 * The dataset formats, by file extension.
 *
 * @example A CSV file whose extension does not say so
 * ```ts
 * import { type DatasetFormat, loadDataset } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/cases.txt`, "input,expected\n2+2?,4\n");
 * const format: DatasetFormat = "csv";
 * const [example] = await Array.fromAsync(await loadDataset(`${dir}/cases.txt`, { name: "cases", format }));
 * await Deno.remove(dir, { recursive: true });
 * if (example?.case?.input !== "2+2?" || example.example_id !== "cases#1") throw new Error("unexpected");
 * ```
 */
export type DatasetFormat = "jsonl" | "json" | "yaml" | "csv";

/**
 * A problem with a dataset as a whole: nothing can be loaded from it. Its
 * message names the file, and the command line exits 2.
 *
 * @example A dataset that is not there
 * ```ts
 * import { DatasetError, loadDataset } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * const error = await loadDataset(`${dir}/cases.jsonl`).then(() => undefined, (e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (!(error instanceof DatasetError) || error.exitCode !== 2) throw new Error("unexpected");
 * if (error.message !== `Cannot open dataset "${dir}/cases.jsonl": no such file`) throw new Error(error.message);
 * if (error.line !== undefined) throw new Error("a missing file is on no line");
 * ```
 *
 * @example A record that does not parse is named by its line and column
 * ```ts
 * import { DatasetError, loadDataset } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/cases.json`, '[{"input": "a"},\n {"input": "b",}]\n');
 * const error = await loadDataset(`${dir}/cases.json`).then(() => undefined, (e) => e);
 * await Deno.remove(dir, { recursive: true });
 * if (!(error instanceof DatasetError) || error.line !== 2 || error.column !== 16) throw new Error(String(error));
 * ```
 */
export class DatasetError extends InputError {
  /**
   * The 1-based line of the file the problem is on, when it is about one
   * (a record that does not parse, a CSV header); `undefined` for the file
   * as a whole (missing, empty, not a list).
   */
  readonly line: number | undefined;
  /** The 1-based column on that line, when the parser tells it. */
  readonly column: number | undefined;

  /**
   * Creates the instance.
   *
   * @param message What is wrong, naming the file (and the line).
   * @param line The 1-based line, when the problem is on one.
   * @param column The 1-based column on that line, when known.
   */
  constructor(message: string, line?: number, column?: number) {
    super(message);
    this.name = "DatasetError";
    this.line = line;
    this.column = line === undefined ? undefined : column;
  }
}

/**
 * Options of {@linkcode loadDataset}.
 *
 * @example NDJSON piped in (`-`), named as the config names it
 * ```ts
 * import { loadDataset, type LoadDatasetOptions } from "./mod.ts";
 * const stdin = ReadableStream.from([new TextEncoder().encode('{"input":"a"}\n{"id":"x","input":"b"}\n')]);
 * const options: LoadDatasetOptions = { name: "piped", stdin };
 * const examples = await Array.fromAsync(await loadDataset("-", options));
 * if (examples.map((e) => e.example_id).join() !== "piped#1,piped#x") throw new Error("unexpected");
 * ```
 */
export interface LoadDatasetOptions {
  /**
   * The dataset's name in example ids, as written in the config.
   * @default {the path as given, or `stdin` for `-`}
   */
  name?: string | undefined;
  /**
   * The format.
   * @default {from the extension; NDJSON for `-`}
   */
  format?: DatasetFormat | undefined;
  /**
   * Where `-` reads from.
   * @default {Deno.stdin.readable}
   */
  stdin?: ReadableStream<Uint8Array> | undefined;
}

/**
 * The format of a dataset path, from its extension.
 *
 * @param path The path.
 * @returns The format, or `undefined` when the extension is unknown.
 */
export function formatOf(path: string): DatasetFormat | undefined {
  if (path === "-") return "jsonl";
  const dot = path.lastIndexOf(".");
  if (dot < 0 || dot < path.lastIndexOf("/")) return undefined; // no extension
  const ext = path.slice(dot + 1).toLowerCase();
  if (ext === "jsonl" || ext === "ndjson") return "jsonl";
  if (ext === "json") return "json";
  if (ext === "yaml" || ext === "yml") return "yaml";
  if (ext === "csv") return "csv";
  return undefined;
}

/** A file-system error in plain words. */
function fileErrorText(error: unknown): string {
  if (error instanceof Deno.errors.NotFound) return "no such file";
  if (error instanceof Deno.errors.PermissionDenied) return "permission denied";
  if (error instanceof Deno.errors.IsADirectory) return "it is a folder";
  if (error instanceof TypeError) return "not valid UTF-8";
  return osErrorText(error);
}

/**
 * The dataset as {@linkcode namedReads} takes it: `-` for stdin under its
 * default name (so it reads "stdin", unquoted), else its name (quoted, a
 * file named `stdin` too).
 */
function readsName(name: string, path: string): string {
  return path === "-" && name === "stdin" ? "-" : name;
}

/** The deepest nesting of arrays and objects a record may have. */
export const MAX_DEPTH = 256;

/**
 * The structure of a record's text, read once for its depth and its keys as
 * written ({@linkcode repeatedKey} takes them), when it is long enough to
 * nest deeper than {@linkcode MAX_DEPTH}: a shorter one cannot, and its keys
 * are counted more cheaply by `repeatedKey` itself.
 */
function longShape(
  text: string,
  start = 0,
  end: number = text.length,
): JsonShape | undefined {
  return end - start > 2 * MAX_DEPTH ? shapeOf(text, start, end) : undefined;
}

let prefixName = "";
let prefix = "#";

/**
 * `name#`, the start of the dataset's example ids: made once per dataset,
 * not once per case.
 */
function idPrefix(name: string): string {
  if (name !== prefixName) {
    prefixName = name;
    prefix = `${name}#`;
  }
  return prefix;
}

/**
 * Builds the example for a parsed record: a case with its id, or an invalid
 * record that says why.
 */
function toExample(name: string, position: number, value: unknown): Example {
  let testCase: Case;
  try {
    testCase = parseCase(value);
  } catch (error) {
    if (!(error instanceof CaseError)) throw error;
    const id = (value as { id?: unknown } | null)?.id;
    const suffix =
      (typeof id === "string" && id !== "") || typeof id === "number"
        ? id
        : position;
    return {
      example_id: `${name}#${suffix}`,
      line: position,
      case: null,
      invalid: error.message,
    };
  }
  return {
    example_id: idPrefix(name) + (testCase.id ?? position),
    line: position,
    case: testCase,
  };
}

/** What the walk of a line's record notes: one for every line, reset each time. */
const lineNotes: WalkNotes = { infinite: false };

/**
 * Parses one JSONL line into an example. Blank lines give `undefined`.
 *
 * @param name The dataset's name.
 * @param line The line.
 * @returns The example.
 */
export function exampleFromLine(name: string, line: Line): Example | undefined {
  if (line.error !== undefined) {
    return {
      example_id: `${name}#${line.line}`,
      line: line.line,
      case: null,
      invalid: line.error,
    };
  }
  if (line.text.trim() === "") return undefined;
  let value: unknown;
  try {
    value = JSON.parse(line.text);
  } catch (error) {
    if (!(error instanceof SyntaxError)) throw error;
    return {
      example_id: `${name}#${line.line}`,
      line: line.line,
      case: null,
      invalid: `Cannot parse JSON: ${error.message}`,
    };
  }
  const shape = longShape(line.text);
  if (shape !== undefined && shape.depth > MAX_DEPTH) {
    return {
      example_id: `${name}#${line.line}`,
      line: line.line,
      case: null,
      invalid: `The record is nested deeper than ${MAX_DEPTH} levels`,
    };
  }
  if (typeof value === "object" && value !== null) {
    // A record that is no object is refused as such, whatever it holds.
    const notes = lineNotes;
    notes.infinite = false;
    const twice = Array.isArray(value)
      ? undefined
      : repeatedKey(line.text, value, 0, line.text.length, notes, shape?.keys);
    if (twice === undefined) {
      keepVerbatimExpected(value, line.text, 0, line.text.length, true);
    }
    keepVerbatimId(value, line.text);
    if (twice !== undefined) {
      return repeatedKeyExample(name, line.line, value, twice.path);
    }
    // `1e400`, read as Infinity: JSON text would carry it as null.
    const overflow = notes.infinite ? overflowingNumber(value) : undefined;
    if (overflow !== undefined) {
      return invalidExample(name, line.line, value, overflow);
    }
  }
  return toExample(name, line.line, value);
}

/**
 * The invalid example of a record whose object gives a key twice: named by
 * its own id, as an invalid case is, unless the id is the key given twice.
 */
function repeatedKeyExample(
  name: string,
  position: number,
  value: object,
  path: string,
): Example {
  return invalidExample(
    name,
    position,
    path === "id" ? {} : value,
    appearsTwice(path),
  );
}

/**
 * The invalid example of a record the loader refuses as read, named by its
 * own id (a finite one) as an invalid case is, else by its position.
 */
function invalidExample(
  name: string,
  position: number,
  value: object,
  invalid: string,
): Example {
  const id = (value as { id?: unknown }).id;
  return {
    example_id: `${name}#${
      (typeof id === "string" && id !== "") ||
        (typeof id === "number" && Number.isFinite(id))
        ? id
        : position
    }`,
    line: position,
    case: null,
    invalid,
  };
}

/** The line breaks of `text[start, end)`. */
function countNewlines(text: string, start: number, end: number): number {
  // Not indexOf: on a one-line file it would search on to the file's end.
  let count = 0;
  for (let i = start; i < end; i++) if (text.charCodeAt(i) === 10) count++;
  return count;
}

async function openBytes(path: string): Promise<ReadableStream<Uint8Array>> {
  let file: Deno.FsFile | undefined;
  try {
    file = await Deno.open(path);
    // Linux opens a folder for reading; only reading it fails, mid-stream.
    if ((await file.stat()).isDirectory) {
      throw new Deno.errors.IsADirectory(path);
    }
    return file.readable;
  } catch (error) {
    file?.close();
    throw new DatasetError(
      `Cannot open dataset ${JSON.stringify(path)}: ${fileErrorText(error)}`,
    );
  }
}

async function readText(
  path: string,
  stdin: () => ReadableStream<Uint8Array>,
): Promise<string> {
  try {
    if (path !== "-") return await readUtf8File(path);
    // `-` with a format given: the whole of stdin, as a file is read whole.
    const bytes = new Uint8Array(
      await new Response(namedReads(stdin(), "-")).arrayBuffer(),
    );
    return decodeUtf8(bytes);
  } catch (error) {
    throw new DatasetError(
      `Cannot read dataset ${JSON.stringify(path)}: ${fileErrorText(error)}${
        error instanceof TextTooLongError
          ? "; a JSON or YAML dataset is read whole: write it as JSONL, one case a line, read a line at a time"
          : ""
      }`,
      error instanceof Utf8Error ? error.line : undefined,
    );
  }
}

/**
 * The first number in `value` that is not finite (YAML's `.inf`, `-.inf`,
 * `.nan`), with its dotted path below `at`; depth-first, keys in order.
 */
function nonFinite(
  value: unknown,
  at: string,
): { path: string; value: string } | undefined {
  if (typeof value === "number") {
    const word = nonFiniteWord(value);
    return word === undefined ? undefined : { path: at, value: word };
  }
  if (typeof value !== "object" || value === null) return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = nonFinite(value[i], `${at}[${i}]`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, item] of Object.entries(value)) {
    const found = nonFinite(item, at === "" ? key : `${at}.${key}`);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * A YAML record with each integer past 2^53 (a bigint from the loader) a
 * number, as JSON reads it, and its `expected`'s JSON text kept verbatim with
 * every digit, as a JSON dataset keeps it; the record itself when it holds
 * no such integer.
 */
function withExactExpected(value: unknown): unknown {
  const plain = withoutBigInts(value);
  if (plain === value || typeof plain !== "object" || plain === null) {
    return plain;
  }
  const expected = (value as { expected?: unknown }).expected;
  if (withoutBigInts(expected) !== expected) {
    attachVerbatimExpected(plain as { expected?: unknown }, jsonOf(expected));
  }
  return plain;
}

/**
 * `value` with each bigint a number (rounded, as JSON reads one past 2^53);
 * the same value when it holds none.
 */
function withoutBigInts(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const items = value.map(withoutBigInts);
    return items.some((item, i) => item !== value[i]) ? items : value;
  }
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const plain = withoutBigInts(item);
    if (plain === item) continue;
    copy ??= { ...value };
    // (A key may be `__proto__`: define it, never set it.)
    Object.defineProperty(copy, key, {
      value: plain,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  }
  return copy ?? value;
}

/** Compact JSON of a YAML value, a bigint written with all its digits. */
function jsonOf(value: unknown): string {
  if (typeof value === "bigint") return String(value);
  if (Array.isArray(value)) return `[${value.map(jsonOf).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    return `{${
      Object.entries(value).map(([key, item]) =>
        `${JSON.stringify(key)}:${jsonOf(item)}`
      ).join(",")
    }}`;
  }
  return JSON.stringify(value) ?? "null";
}

function fromList(
  name: string,
  path: string,
  values: readonly unknown[],
  source?: string,
  yamlLine?: (index: number) => number | undefined,
): ReadableStream<Example[]> {
  const ids = new IdentityCheck(name, path, "record");
  const spans = source !== undefined ? elementSpans(source) : undefined;
  const lineOf = spans !== undefined ? jsonLines(source!, spans) : yamlLine;
  // The records of a batch with a key given twice on a line after their
  // first: the key's path, and how many lines below the first.
  const repeated = new Map<number, { path: string; below: number }>();
  let i = 0;
  const one = (): Example => {
    let value = values[i];
    const span = spans?.[i];
    const position = ++i;
    if (source !== undefined && span !== undefined) {
      const shape = longShape(source, span[0], span[1]);
      if (shape !== undefined && shape.depth > MAX_DEPTH) {
        return {
          example_id: `${name}#${position}`,
          line: position,
          case: null,
          invalid: `The record is nested deeper than ${MAX_DEPTH} levels`,
        };
      }
      if (typeof value === "object" && value !== null) {
        const notes = { infinite: false };
        const twice = Array.isArray(value)
          ? undefined
          : repeatedKey(source, value, span[0], span[1], notes, shape?.keys);
        if (twice !== undefined) {
          // Its line is known once the record's is (below).
          const below = countNewlines(source, span[0], twice.offset);
          if (below > 0) repeated.set(position, { path: twice.path, below });
          keepVerbatimId(value, source, span[0]);
          return repeatedKeyExample(name, position, value, twice.path);
        }
        keepVerbatimExpected(value, source, span[0], span[1], true);
        keepVerbatimId(value, source, span[0]);
        const overflow = notes.infinite ? overflowingNumber(value) : undefined;
        if (overflow !== undefined) {
          return invalidExample(name, position, value, overflow);
        }
      }
    } else {
      // YAML: `.inf` and `.nan` are numbers there, and none of JSON: every
      // Score, unit record and payload would carry them as null, which
      // means "no expected" (and exact_match would compare with "null").
      const odd = nonFinite(value, "");
      if (odd !== undefined) {
        return {
          example_id: `${name}#${position}`,
          line: position,
          case: null,
          invalid: `${
            odd.path === "" ? "The record" : JSON.stringify(odd.path)
          } is ${odd.value}, a number JSON cannot carry: write ${
            JSON.stringify(odd.value)
          } (quoted) for the text`,
        };
      }
      // YAML: its reader gives an integer as a number, so one past 2^53 has
      // lost digits that no source span can bring back.
      // (The loader keeps such an integer's digits, as a bigint.)
      const id = (value as { id?: unknown } | null)?.id;
      if (typeof id === "bigint") {
        return {
          example_id: `${name}#${position}`,
          line: position,
          case: null,
          invalid:
            `"id" is an integer past 2^53, which YAML reads rounded (to ${
              Number(id)
            }): write it quoted, as a string`,
        };
      }
      value = withExactExpected(value);
    }
    return toExample(name, position, value);
  };
  return new ReadableStream<Example[]>({
    pull(controller) {
      if (i >= values.length) {
        const empty = ids.emptyError();
        if (empty !== undefined) controller.error(empty);
        else controller.close();
        return;
      }
      const batch: Example[] = [];
      while (i < values.length && batch.length < 1024) batch.push(one());
      ids.check(batch);
      // A malformed record is named by its line too: a list's position is
      // hard to count by eye.
      for (const example of batch) {
        if (example.invalid !== undefined) {
          const at = lineOf?.(example.line - 1);
          if (at !== undefined) example.at = at;
          const twice = repeated.get(example.line);
          if (at !== undefined && twice !== undefined) {
            example.invalid = appearsTwice(twice.path, at + twice.below);
          }
        }
      }
      repeated.clear();
      controller.enqueue(batch);
    },
  });
}

/**
 * Opens a dataset as a stream of examples. JSONL is streamed line by line
 * and CSV record by record; JSON and YAML are read whole. A malformed record
 * becomes an example with `case: null` and `invalid` set, and the stream goes
 * on; a problem with the file as a whole (missing, not a list) throws before
 * any record, except in a CSV, where a record that cannot be parsed (an
 * unclosed or stray quote, more fields than the header) ends the stream with a
 * {@linkcode DatasetError} naming its line.
 *
 * Example ids are `<name>#<id>`, where a case without an `id` is numbered by
 * its 1-based line (JSONL) or position (JSON, YAML, CSV without header).
 *
 * @param path The file, or `-` for NDJSON on stdin.
 * @param options Name, format and stdin.
 * @returns The examples.
 * @throws {DatasetError} When the file cannot be read or is not a list.
 *
 * @example
 * ```ts
 * import { loadDataset } from "./dataset.ts";
 * const path = await Deno.makeTempFile({ suffix: ".jsonl" });
 * await Deno.writeTextFile(path, '{"input":"a"}\n{"id":"x","input":"b"}\n');
 * const ids = (await Array.fromAsync(await loadDataset(path, { name: "d.jsonl" }))).map((e) => e.example_id);
 * await Deno.remove(path);
 * if (ids.join() !== "d.jsonl#1,d.jsonl#x") throw new Error(ids.join());
 * ```
 */
export async function loadDataset(
  path: string,
  options: LoadDatasetOptions = {},
): Promise<ReadableStream<Example>> {
  return (await loadDatasetBatches(path, options)).pipeThrough(
    new TransformStream<Example[], Example>({
      transform(batch, controller) {
        for (const example of batch) controller.enqueue(example);
      },
    }),
  );
}

/**
 * Makes ids unambiguous: a record whose `id` was seen before is an invalid
 * case (named by its line, so its Scores cannot be mistaken for the first
 * one's). It also counts the records, so that a dataset without a single one
 * can be refused with a {@linkcode DatasetError}.
 */
class IdentityCheck {
  // Every example id must be unique. A case's own id may be any text; a case
  // without one is named by its line, so the two kinds can collide too.
  readonly #own = new SeenIds();
  readonly #lineNamed = new SeenIds();
  readonly #name: string;
  readonly #path: string;
  readonly #unit: string;
  #count = 0;

  constructor(name: string, path: string, unit: string) {
    this.#name = name;
    this.#path = path;
    this.#unit = unit;
  }

  /** Replaces, in place, each example whose id is taken with an invalid case. */
  check(batch: Example[]): void {
    const unit = this.#unit;
    const prefix = this.#name.length + 1;
    this.#count += batch.length;
    for (let k = 0; k < batch.length; k++) {
      const example = batch[k]!;
      const small = smallKey(example);
      if (small >= 0) {
        // The same checks as below, on the number the id's text stands for.
        const first = this.#own.getSmall(small);
        if (example.case!.id === undefined) {
          if (first === undefined) {
            this.#lineNamed.setSmall(small, example.line);
            continue;
          }
        } else if (
          first === undefined && this.#lineNamed.getSmall(small) === undefined
        ) {
          this.#own.setSmall(small, example.line);
          continue;
        }
      }
      // Ids are compared in NFC, as every reader of the Scores compares
      // them; messages quote the id as this case wrote it.
      const written = example.example_id.slice(prefix);
      const key = nfcKey(written);
      if (example.case === null) {
        // Invalid as read, named by its line as a case without an id is,
        // unless a case's own id took that name before (`"id": 3`): then by
        // where it stands, as a duplicate is and as `score` names a unit.
        if (this.#own.get(key) !== undefined) {
          batch[k] = {
            ...example,
            example_id: this.#placeName(example.line),
            formerly: this.#formerName(written),
          };
        }
        this.#own.set(nfcKey(batch[k]!.example_id.slice(prefix)), example.line);
        continue;
      }
      const byLine = example.case?.id === undefined &&
        key === String(example.line);
      let problem: string | undefined;
      if (byLine) {
        const first = this.#own.get(key);
        if (first === undefined) this.#lineNamed.set(key, example.line);
        else {
          problem =
            `This case has no id, and its ${unit} number ${key} is the id of the case at ${unit} ${first}: ` +
            "give it an id";
        }
      } else {
        const first = this.#own.get(key);
        if (first !== undefined) {
          problem = `Duplicate id ${
            JSON.stringify(written)
          } (first at ${unit} ${first}): ids must be unique`;
        } else if (this.#lineNamed.get(key) !== undefined) {
          problem =
            `Id ${
              JSON.stringify(written)
            } is also the ${unit} number of the case without an id at ${unit} ${key}: ` +
            "ids must be unique";
        } else this.#own.set(key, example.line);
      }
      if (problem !== undefined) {
        // Named by where it stands, apart from both kinds of ids.
        const id = this.#placeName(example.line);
        this.#own.set(id.slice(prefix), example.line);
        batch[k] = {
          example_id: id,
          line: example.line,
          case: null,
          invalid: problem,
        };
      }
    }
  }

  /**
   * The example id of an invalid case named by where it stands
   * (`<name>#line-3`), with `-invalid` added while a case's own id took it
   * (`"id": "line-3"`).
   */
  #placeName(line: number): string {
    let name = `${this.#unit}-${line}`;
    while (this.#own.get(nfcKey(name)) !== undefined) name += "-invalid";
    return `${this.#name}#${name}`;
  }

  /**
   * The example id an earlier evalpipe gave a malformed record whose name
   * `written` a case's own id took: `-invalid` added while taken, read
   * against the same ids (`d.jsonl#3-invalid-invalid` when a case's own id
   * is `3-invalid`).
   */
  #formerName(written: string): string {
    let name = `${written}-invalid`;
    while (this.#own.get(nfcKey(name)) !== undefined) name += "-invalid";
    return `${this.#name}#${name}`;
  }

  /** The error for a dataset that had no record, once it ended. */
  emptyError(): DatasetError | undefined {
    return this.#count === 0
      ? new DatasetError(`Dataset ${JSON.stringify(this.#path)} has no cases`)
      : undefined;
  }
}

/**
 * The number an example's id text stands for, when that text is the
 * canonical form of an integer below 2^31 known without reading it: a case's
 * `id` given as such a JSON number, or a case without an `id`, named by its
 * line. Else -1, and the id is checked by its text.
 */
function smallKey(example: Example): number {
  const testCase = example.case;
  if (testCase === null) return -1;
  const id = testCase.id;
  if (id === undefined) return example.line < 2 ** 31 ? example.line : -1;
  return typeof id === "number" && Number.isInteger(id) && id >= 0 &&
      id < 2 ** 31
    ? id
    : -1;
}

/**
 * Like {@linkcode loadDataset}, but emits examples in batches (the records
 * of one read, or up to 1024 of a list): far fewer stream steps per case.
 *
 * @param path The file, or `-` for NDJSON on stdin.
 * @param options Name, format and stdin.
 * @returns Batches of examples, in order.
 * @throws {DatasetError} When the file cannot be read or is not a list.
 *
 * @example A YAML list, read whole, arrives as one batch
 * ```ts
 * import { loadDatasetBatches } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/cases.yaml`, "- input: a\n- input: b\n- id: c\n  input: c\n");
 * const batches = await Array.fromAsync(await loadDatasetBatches(`${dir}/cases.yaml`, { name: "cases.yaml" }));
 * await Deno.remove(dir, { recursive: true });
 * const ids = batches.flat().map((e) => e.example_id).join();
 * if (batches.length !== 1 || ids !== "cases.yaml#1,cases.yaml#2,cases.yaml#c") throw new Error(ids);
 * ```
 */
export async function loadDatasetBatches(
  path: string,
  options: LoadDatasetOptions = {},
): Promise<ReadableStream<Example[]>> {
  const name = options.name ?? (path === "-" ? "stdin" : path);
  const format = options.format ?? formatOf(path);
  if (format === undefined) {
    // A compressed file is read through a pipe: say how.
    const packed = /\.(gz|bz2|xz|zst)$/i.exec(path)?.[1]?.toLowerCase();
    throw new DatasetError(
      `Cannot tell the format of dataset ${JSON.stringify(path)}: ` +
        "use .jsonl, .ndjson, .json, .yaml, .yml or .csv" +
        (packed === undefined
          ? ""
          : `; to read a .${packed} file, set dataset: "-" and run ${
            { gz: "gunzip", bz2: "bunzip2", xz: "unxz", zst: "unzstd" }[packed]
          } -c ${JSON.stringify(path)} | evalpipe run SUITE`),
    );
  }
  if (format === "jsonl") {
    // A read that fails (stdin redirected from a folder) names the input.
    const bytes = namedReads(
      path === "-"
        ? (options.stdin ?? Deno.stdin.readable)
        : await openBytes(path),
      readsName(name, path),
    );
    // One stage from bytes to checked examples: each hop between stages
    // would keep another batch of cases alive.
    const splitter = new LineSplitter();
    const ids = new IdentityCheck(name, path, "line");
    let first = true;
    const emit = (
      lines: Line[],
      controller: TransformStreamDefaultController<Example[]>,
    ) => {
      const batch: Example[] = [];
      for (const line of lines) {
        const example = exampleFromLine(name, line);
        if (example === undefined) continue;
        if (first) {
          first = false;
          if (example.case === null) notJsonl(path, line);
        }
        batch.push(example);
      }
      ids.check(batch);
      if (batch.length > 0) controller.enqueue(batch);
    };
    return bytes.pipeThrough(
      new TransformStream<Uint8Array, Example[]>({
        transform(chunk, controller) {
          const lines: Line[] = [];
          splitter.push(chunk, lines);
          emit(lines, controller);
        },
        flush(controller) {
          const lines: Line[] = [];
          splitter.end(lines);
          emit(lines, controller);
          const empty = ids.emptyError();
          if (empty !== undefined) controller.error(empty);
        },
      }),
    );
  }
  const stdin = () => options.stdin ?? Deno.stdin.readable;
  if (format === "csv") {
    return await csvExamples(
      name,
      path,
      path === "-" ? stdin() : await openBytes(path),
    );
  }
  const text = await readText(path, stdin);
  if (format === "json") {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (!(error instanceof SyntaxError)) throw error;
      // V8's message has the place in its own words; the scanner, as numbers.
      // Loaded here, on the way to an error: a run reads no .json dataset
      // it cannot parse, and `run` starts without the scanner.
      const lines = jsonLinesAt(text);
      if (lines !== undefined) {
        throw new DatasetError(
          `Cannot parse dataset ${
            JSON.stringify(path)
          } line ${lines}: it holds one JSON value per line (JSON Lines, as Hugging Face's and pandas' to_json write), not a JSON array: name it .jsonl`,
          lines,
        );
      }
      const { jsonSyntaxPlace } = await import("../io/_json_syntax.ts");
      const place = jsonSyntaxPlace(text);
      throw new DatasetError(
        `Cannot parse dataset ${JSON.stringify(path)}: ${error.message}`,
        place?.line,
        place?.column,
      );
    }
    if (!Array.isArray(value)) {
      throw new DatasetError(
        `Dataset ${JSON.stringify(path)} must hold a JSON array of cases${
          listWithin(value, "an object")
        }`,
      );
    }
    return fromList(name, path, value, text);
  }
  // The one format left: YAML.
  let value: unknown;
  try {
    value = loadYaml(text, path);
  } catch (error) {
    if (
      !(error instanceof YAMLException || error instanceof YamlBombError ||
        error instanceof YamlRefusedError)
    ) {
      throw error;
    }
    // At its line, in the reason's words: the parser's message names the
    // file again and quotes the text around the line under a caret.
    const { line, reason } = yamlProblem(error);
    const column = (error as { mark?: { column?: unknown } }).mark?.column;
    throw new DatasetError(
      `Cannot parse dataset ${JSON.stringify(path)}${
        line !== undefined ? ` line ${line}` : ""
      }: ${reason}`,
      line,
      typeof column === "number" ? column + 1 : undefined,
    );
  }
  if (!Array.isArray(value)) {
    throw new DatasetError(
      `Dataset ${JSON.stringify(path)} must hold a YAML list of cases${
        listWithin(value, "a mapping")
      }`,
    );
  }
  return fromList(name, path, value, undefined, yamlLines(text, path));
}

/**
 * The line a `.json` file's second value starts on, when the file is JSON
 * Lines (its first line one JSON value, more after it), as Hugging Face's
 * and pandas' `to_json` write under `.json`; else `undefined`.
 */
function jsonLinesAt(text: string): number | undefined {
  const end = text.indexOf("\n");
  if (end < 0 || text.slice(end).trim() === "") return undefined;
  try {
    JSON.parse(text.slice(0, end));
  } catch (error) {
    // The first line is no value alone: the file is something else.
    if (!(error instanceof SyntaxError)) throw error;
    return undefined;
  }
  // The second value's line: blank lines after the first are skipped.
  let line = 2;
  for (let at = end + 1;; line++) {
    const next = text.indexOf("\n", at);
    if (next < 0 || text.slice(at, next).trim() !== "") return line;
    at = next + 1;
  }
}

/**
 * What a dataset that is one object rather than a list is, for its message:
 * its keys, and where a list of cases may be (`tests:` of a promptfoo
 * config, `data:` of an export).
 */
function listWithin(value: unknown, kind: string): string {
  if (typeof value !== "object" || value === null) return "";
  const keys = Object.keys(value);
  const shown = keys.slice(0, 8).map((key) => JSON.stringify(key));
  if (keys.length > 8) shown.push("…");
  // A list of objects: a list of prompts (texts) holds no cases.
  const list = keys.find((key) => {
    const items = (value as Record<string, unknown>)[key];
    return Array.isArray(items) && items.length > 0 &&
      items.every((item) =>
        typeof item === "object" && item !== null && !Array.isArray(item)
      );
  });
  return `, not ${kind} (its keys are ${shown.join(", ")})${
    list === undefined
      ? ""
      : `: write the list under ${JSON.stringify(list)} alone, each item a case`
  }`;
}

/**
 * Refuses a `.jsonl` file whose first record shows it is not JSONL: a JSON
 * array, or an object written over several lines. Read line by line, its
 * lines were malformed records and the cases that happened to fit on one
 * line were run, the rest lost among the errors.
 *
 * @param path The dataset's path.
 * @param line Its first line that is not blank, a malformed record.
 * @throws {DatasetError} When the file is one of these.
 */
function notJsonl(path: string, line: Line): void {
  const text = line.text.trim();
  const what = text.startsWith("[")
    ? "holds a JSON array, not one case per line: name it .json, or write each case on a line of its own"
    : text === "{"
    ? 'starts a case over several lines ("{" alone): JSONL holds one case per line (`jq -c .` writes them so), or name a JSON array .json'
    : undefined;
  if (what === undefined) return;
  const where = `dataset ${JSON.stringify(path)} line ${line.line}`;
  throw new DatasetError(`Cannot parse ${where}: it ${what}`, line.line);
}

/**
 * The line each element of a JSON array starts on, asked in increasing
 * order (a malformed record's, as the list is read): the newlines are
 * counted once, up to the element asked.
 */
function jsonLines(
  text: string,
  spans: ReadonlyArray<readonly [number, number]>,
): (index: number) => number | undefined {
  let offset = 0;
  let line = 1;
  return (index) => {
    const start = spans[index]?.[0];
    if (start === undefined) return undefined;
    if (start < offset) [offset, line] = [0, 1];
    for (
      let nl = text.indexOf("\n", offset);
      nl !== -1 && nl < start;
      nl = text.indexOf("\n", nl + 1)
    ) line++;
    offset = start;
    return line;
  };
}

/**
 * The line each item of a YAML list starts on, from a second parse that
 * keeps positions, made only once a malformed record needs it.
 */
function yamlLines(
  text: string,
  path: string,
): (index: number) => number | undefined {
  let located: LocatedYaml | null | undefined;
  return (index) => {
    if (located === undefined) {
      try {
        located = parseYaml(text, path);
      } catch (error) {
        // It loaded once, so only the locating parse's own limit refuses it
        // (nesting past its 64 levels, where loading takes 256): the lines
        // are a help, the record's message stands without them. Anything
        // else is a bug.
        if (!(error instanceof YAMLException)) throw error;
        located = null;
      }
    }
    return located?.lineOf([index]);
  };
}

/**
 * A CSV file as batches of examples, streamed: the header names the columns,
 * each record after it is a case numbered by its position (header not
 * counted). A record that cannot be parsed, or has more fields than the
 * header, ends the stream with a {@linkcode DatasetError} naming its line.
 */
async function csvExamples(
  name: string,
  path: string,
  input: ReadableStream<Uint8Array>,
): Promise<ReadableStream<Example[]>> {
  // A UTF-16 file (Excel's "Unicode Text") is refused, and a failed read named.
  const bytes = namedReads(input, readsName(name, path));
  // The CSV library is loaded only when a CSV dataset is read.
  const { csvRecords } = await import("./_csv.ts");
  const quoted = JSON.stringify(path);
  let header: string[] | undefined;
  const records = csvRecords(
    bytes,
    (line, detail, before) => {
      // A header that reads every case wrong says more than the record it
      // broke: Excel's ";" between quoted fields fails at the first quote.
      const first = before[0];
      if (header === undefined && first !== undefined) {
        try {
          checkHeader(first.fields, quoted, first.line);
        } catch (error) {
          if (error instanceof DatasetError) return error;
          throw error;
        }
      }
      return new DatasetError(
        line === undefined
          ? `Cannot read dataset ${quoted}: ${detail}`
          : `Cannot parse dataset ${quoted} line ${line}: ${detail}`,
        line,
      );
    },
  );
  const ids = new IdentityCheck(name, path, "record");
  let position = 0;
  const toExamples = (batch: CsvRecord[]): Example[] => {
    const examples: Example[] = [];
    const lines: number[] = [];
    for (const { fields, line } of batch) {
      if (header === undefined) {
        checkHeader(fields, quoted, line);
        header = fields;
        continue;
      }
      if (fields.length > header.length) {
        throw new DatasetError(
          `Cannot parse dataset ${quoted} line ${line}: the record has ` +
            `${fields.length} fields but the header has ${header.length}`,
          line,
        );
      }
      examples.push(
        toExample(name, ++position, caseFromRow(header, fields)),
      );
      lines.push(line);
    }
    ids.check(examples);
    examples.forEach((example, i) => {
      if (example.invalid !== undefined) example.at = lines[i]!;
    });
    return examples;
  };
  // The first read (the header, the records after it) is taken now: a
  // header that loads every case wrong refuses the run before any output.
  const reader = records.getReader();
  const first = await reader.read();
  const head = first.done ? [] : toExamples(first.value);
  return new ReadableStream<Example[]>({
    start(controller) {
      if (head.length > 0) controller.enqueue(head);
    },
    async pull(controller) {
      const { done, value } = await reader.read();
      if (!done) {
        const examples = toExamples(value);
        if (examples.length > 0) controller.enqueue(examples);
        return;
      }
      const empty = ids.emptyError();
      if (empty !== undefined) controller.error(empty);
      else controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** The columns a CSV case reads by name; every other one is metadata. */
const CASE_COLUMNS = ["id", "input", "expected", "context", "output", "trace"];

/**
 * Refuses a CSV header that would load every case wrong: a column named
 * twice (one would hide the other), a case field's name spelt otherwise
 * (`Input`, ` expected`: it would be metadata), no `input` column (every
 * case would be invalid, one message each).
 */
function checkHeader(header: readonly string[], quoted: string, line: number) {
  const fail = (detail: string) =>
    new DatasetError(
      `Cannot read dataset ${quoted} line ${line}: ${detail}`,
      line,
    );
  const names = header.map((name) => JSON.stringify(name));
  header.forEach((name, i) => {
    const first = header.indexOf(name);
    if (first < i) {
      throw fail(
        `columns ${first + 1} and ${i + 1} are both named ${
          names[i]
        }: give each column its own name`,
      );
    }
    const meant = name.trim().toLowerCase();
    if (!CASE_COLUMNS.includes(name) && CASE_COLUMNS.includes(meant)) {
      throw fail(
        `column ${i + 1} is named ${names[i]}: the case's field is "${meant}"` +
          " (column names are read exactly; anything else is metadata)",
      );
    }
  });
  if (!header.includes("expected")) {
    for (const [i, name] of header.entries()) {
      const what = foreignAnswer(name);
      if (what !== undefined) {
        throw fail(`column ${i + 1} "${name}" is ${what}`);
      }
    }
  }
  if (!header.includes("input") && !header.includes("trace")) {
    // Excel's note of its separator, which it reads and no CSV reader does.
    const note = /^sep=(.)$/.exec(header.length === 1 ? header[0]! : "");
    if (note !== null) {
      throw fail(
        `${names[0]} is Excel's note of the separator, ${
          JSON.stringify(note[1])
        }; a CSV dataset's fields are separated by commas: save it as CSV with commas, without that line`,
      );
    }
    // Excel in a language with decimal commas saves CSV with semicolons.
    const separator = [";", "\t", "|"].find((s) =>
      header.length === 1 && header[0]!.split(s).includes("input")
    );
    if (separator !== undefined) {
      throw fail(
        `the header is one column, ${names[0]}: its fields are separated by ${
          JSON.stringify(separator)
        }, and a CSV dataset's by commas: save it with commas`,
      );
    }
    // Another tool's columns (promptfoo's vars, a benchmark's "question"):
    // say which to rename, and how a prompt reads the others.
    throw fail(
      `the header has no "input" column, which every case needs (the columns are ${
        names.join(", ")
      }): name "input" the column of the text to send (a target's prompt reads it as {{input}}, and a column that is no case field ("id", "expected", "context", "output") as {{metadata.<its name>}})`,
    );
  }
}

/**
 * A CSV record as a case: known columns by name, the rest as metadata. A
 * record with fewer fields than the header has empty ones at the end.
 */
function caseFromRow(
  header: readonly string[],
  fields: readonly string[],
): Record<string, unknown> {
  const row: Record<string, string> = {};
  header.forEach((key, i) => (row[key] = fields[i] ?? ""));
  const record: Record<string, unknown> = {};
  const metadata: Record<string, string> = {};
  for (const [key, cell] of Object.entries(row)) {
    if (key === "input" || key === "output") record[key] = cell;
    else if (key === "id") {
      if (cell !== "") record.id = cell; // an empty cell: numbered by position
    } else if (key === "expected") {
      if (cell !== "") record.expected = cell;
    } else if (key === "trace") {
      if (cell !== "") record.trace = cell; // the `trace` target's file
    } else if (key === "context") {
      if (cell.trim().startsWith("[")) {
        try {
          record.context = JSON.parse(cell);
        } catch (error) {
          if (!(error instanceof SyntaxError)) throw error;
          record.context = [cell]; // not JSON after all: one chunk of text
        }
      } else if (cell !== "") record.context = [cell];
    } else metadata[key] = cell;
  }
  if (Object.keys(metadata).length > 0) record.metadata = metadata;
  return record;
}

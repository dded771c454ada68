/**
 * YAML with source positions, so a config error can name its line.
 *
 * @module
 */

import * as yaml from "js-yaml";

/**
 * YAML 1.2's core schema with merge keys (`<<: *defaults`), which YAML 1.1
 * loaders (PyYAML, so evalglass; `@std/yaml`) read and suites use to share
 * settings between scorers or targets.
 */
const SCHEMA = yaml.CORE_SCHEMA.withTags(yaml.mergeTag);

/**
 * YAML's integers as the core schema reads them, except one past 2^53, which
 * a number would round: it is a `bigint`, every digit kept, for a dataset
 * loader to carry verbatim (as JSON datasets keep an `expected`'s digits).
 */
const EXACT_INT_TAG = {
  ...yaml.intCoreTag,
  resolve(source: string, isExplicit: boolean, tagName: string) {
    const value = yaml.intCoreTag.resolve(source, isExplicit, tagName);
    if (typeof value === "number" && Number.isSafeInteger(value)) return value;
    // Digits past a double's range are no integer to the core tag at all
    // (they stay text, as before): a bigint would read as Infinity.
    if (value === yaml.NOT_RESOLVED) return value;
    const written = /^([-+]?)(0[box])?([0-9a-fA-F]+)$/.exec(source);
    if (written === null) return value;
    try {
      const digits = BigInt(`${written[2] ?? ""}${written[3]}`);
      return written[1] === "-" ? -digits : digits;
    } catch (error) {
      // Not an integer after all (hex digits without 0x: a float's or text's).
      if (error instanceof SyntaxError) return value;
      throw error;
    }
  },
} as unknown as yaml.ScalarTagDefinition<number>;

/** {@linkcode SCHEMA} with integers past 2^53 read exactly, as bigints. */
const EXACT_SCHEMA = SCHEMA.withTags(EXACT_INT_TAG);

/** A parsed YAML document and where each of its nodes starts. */
export interface LocatedYaml {
  /** The document's value. */
  value: unknown;
  /** The 1-based line of the node at `path` (a key's line for mapping members). */
  lineOf(path: readonly PropertyKey[]): number | undefined;
}

type Frame =
  | { kind: "map"; path: string; key: string | undefined }
  | { kind: "seq"; path: string; index: number }
  | { kind: "doc"; path: string };

const join = (
  path: string,
  key: string | number,
) => (path === "" ? String(key) : `${path}\u0000${key}`);

/**
 * Parses one YAML document and records the offset of every node by path.
 *
 * @param text The YAML text.
 * @param filename For the parser's own messages.
 * @returns The value and a line finder.
 * @throws {yaml.YAMLException} On a syntax error.
 */
export function parseYaml(text: string, filename: string): LocatedYaml {
  const events = yaml.parseEvents(text, { filename, maxDepth: 64 });
  const offsets = new Map<string, number>();
  const stack: Frame[] = [];
  const { DOCUMENT, SEQUENCE, MAPPING, SCALAR, ALIAS, POP } = yaml.EVENT_ID;
  for (const event of events) {
    if (event.type === POP) {
      stack.pop();
      continue;
    }
    if (event.type === DOCUMENT) {
      stack.push({ kind: "doc", path: "" });
      continue;
    }
    const start = event.type === SCALAR
      ? event.valueStart
      : event.type === ALIAS
      ? event.anchorStart
      : event.start;
    const parent = stack[stack.length - 1];
    let path = "";
    if (parent?.kind === "map") {
      if (parent.key === undefined) {
        // A key: remember it and where it stands; complex keys have no name.
        parent.key = event.type === SCALAR
          ? yaml.getScalarValue(text, event)
          : "?";
        const keyPath = join(parent.path, parent.key);
        if (!offsets.has(keyPath)) offsets.set(keyPath, start);
        if (event.type === MAPPING || event.type === SEQUENCE) {
          stack.push({ kind: "doc", path: "\u0001" });
        }
        continue;
      }
      path = join(parent.path, parent.key);
      parent.key = undefined;
    } else if (parent?.kind === "seq") {
      path = join(parent.path, parent.index++);
      offsets.set(path, start);
    } else if (parent !== undefined) {
      path = parent.path;
      if (!offsets.has(path)) offsets.set(path, start);
    }
    if (event.type === MAPPING) {
      stack.push({ kind: "map", path, key: undefined });
    } else if (event.type === SEQUENCE) {
      stack.push({ kind: "seq", path, index: 0 });
    }
  }
  checkExpansion(text, events, MAX_NODES);
  checkOneDocument(text, events);
  checkPlainKeys(text, events);
  const value = construct(text, events, {
    source: text,
    filename,
    schema: SCHEMA,
    maxAliases: 100,
  });
  const lineStarts: number[] = [0];
  for (let i = text.indexOf("\n"); i >= 0; i = text.indexOf("\n", i + 1)) {
    lineStarts.push(i + 1);
  }
  return {
    value,
    lineOf(path) {
      for (let n = path.length; n >= 0; n--) {
        const key = path.slice(0, n).map(String).reduce<string>(join, "");
        const offset = offsets.get(key);
        if (offset === undefined) continue;
        let lo = 0;
        let hi = lineStarts.length - 1;
        while (lo < hi) {
          const mid = (lo + hi + 1) >> 1;
          if (lineStarts[mid]! <= offset) lo = mid;
          else hi = mid - 1;
        }
        return lo + 1;
      }
      return undefined;
    },
  };
}

/** The most nodes a document may expand to, aliases followed. */
export const MAX_NODES = 1_000_000;

/**
 * How YAML writes a number JSON cannot carry (`.inf`, `-.inf`, `.nan`), for
 * messages; `undefined` for a finite one.
 *
 * @param value A number a YAML file gave.
 * @returns Its YAML word, or `undefined`.
 *
 * @example
 * ```ts
 * import { nonFiniteWord } from "./yaml.ts";
 * if (nonFiniteWord(-Infinity) !== "-.inf" || nonFiniteWord(1) !== undefined) throw new Error();
 * ```
 */
export function nonFiniteWord(value: number): string | undefined {
  if (Number.isFinite(value)) return undefined;
  return Number.isNaN(value) ? ".nan" : value > 0 ? ".inf" : "-.inf";
}

/** A YAML document whose aliases expand past the limit (a "billion laughs"). */
export class YamlBombError extends Error {
  /** The message without decoration, as `YAMLException` has it. */
  readonly reason: string;

  /**
   * Creates the error.
   *
   * @param message What the document expands to.
   */
  constructor(message: string) {
    super(message);
    this.name = "YamlBombError";
    this.reason = message;
  }
}

/**
 * What a YAML error says and where, without the parser's decoration (the
 * file name, a snippet of the text under a caret): how a message names it,
 * `Cannot parse dataset "cases.yaml" line 3: deficient indentation`.
 *
 * @param error What parsing threw: a `YAMLException`, a `YamlBombError` or
 *   a `YamlRefusedError`.
 * @returns Its 1-based line, when it has one, and its reason.
 *
 * @example
 * ```ts
 * import { loadYaml, yamlProblem } from "./yaml.ts";
 * const problem = (() => {
 *   try {
 *     loadYaml("- input: a\n- input: [b\n", "cases.yaml");
 *   } catch (error) {
 *     return yamlProblem(error);
 *   }
 * })();
 * if (problem?.line !== 3 || problem.reason.includes("cases.yaml")) throw new Error(JSON.stringify(problem));
 * ```
 */
export function yamlProblem(
  error: unknown,
): { line: number | undefined; reason: string } {
  const mark = (error as { mark?: { line: number } }).mark;
  return {
    line: mark !== undefined ? mark.line + 1 : undefined,
    reason: (error as { reason?: string }).reason ?? String(error),
  };
}

/**
 * YAML the parser reads but evalpipe refuses, at the line where it stands:
 * a second document, a key that is a list or a mapping.
 */
export class YamlRefusedError extends Error {
  /** The message without decoration, as `YAMLException` has it. */
  readonly reason: string;
  /** Where it stands, its line 0-based as `YAMLException`'s. */
  readonly mark: { line: number };

  /**
   * Creates the error.
   *
   * @param reason What is refused.
   * @param line Its 0-based line.
   */
  constructor(reason: string, line: number) {
    super(`${reason} (line ${line + 1})`);
    this.name = "YamlRefusedError";
    this.reason = reason;
    this.mark = { line };
  }
}

/**
 * A YAML file that holds a second document (after a `---`): what it says
 * would be dropped unread, so it is refused where it starts.
 */
export class YamlDocumentsError extends YamlRefusedError {
  /**
   * Creates the error.
   *
   * @param line The 0-based line of the second document's `---`.
   */
  constructor(line: number) {
    super(
      "a second YAML document starts here; the file must hold one (its first would be read, the rest dropped)",
      line,
    );
    this.name = "YamlDocumentsError";
  }
}

/**
 * A mapping key that is itself a list or a mapping (`? [a, b]`): no config
 * or case field can be named so, and the parser would blame line 1.
 */
export class YamlKeyError extends YamlRefusedError {
  /**
   * Creates the error.
   *
   * @param line The 0-based line of the key.
   */
  constructor(line: number) {
    super(
      "a key must be a plain name, not a list or a mapping (a ? key)",
      line,
    );
    this.name = "YamlKeyError";
  }
}

/** Refuses a mapping key that is a list or a mapping, at its line. */
function checkPlainKeys(
  text: string,
  events: ReturnType<typeof yaml.parseEvents>,
): void {
  const { DOCUMENT, SEQUENCE, MAPPING, POP } = yaml.EVENT_ID;
  // Per open node (documents too): for a mapping, whether a key comes next.
  const open: Array<{ map: boolean; keyNext: boolean }> = [];
  for (const event of events) {
    if (event.type === POP) {
      open.pop();
      continue;
    }
    if (event.type === DOCUMENT) {
      open.push({ map: false, keyNext: false });
      continue;
    }
    const parent = open[open.length - 1];
    if (parent?.map === true) {
      const isKey = parent.keyNext;
      parent.keyNext = !isKey;
      if (isKey && (event.type === MAPPING || event.type === SEQUENCE)) {
        const line = text.slice(0, event.start).split("\n").length - 1;
        throw new YamlKeyError(line);
      }
    }
    if (event.type === MAPPING || event.type === SEQUENCE) {
      open.push({ map: event.type === MAPPING, keyNext: true });
    }
  }
}

/**
 * Refuses a stream whose later documents hold anything, naming the line
 * where the first of them starts (a lone `---` at the end drops nothing).
 */
function checkOneDocument(
  text: string,
  events: ReturnType<typeof yaml.parseEvents>,
): void {
  const { DOCUMENT, SCALAR, ALIAS } = yaml.EVENT_ID;
  let documents = 0;
  let offset: number | undefined;
  for (const event of events) {
    if (event.type === DOCUMENT) {
      documents++;
      continue;
    }
    if (documents < 2) continue;
    // A later document's first node (an empty one has none): its `---` is
    // the last marker before it.
    const start = event.type === SCALAR
      ? event.valueStart
      : event.type === ALIAS
      ? event.anchorStart
      : (event as { start?: number }).start;
    if (start !== undefined && start >= 0) {
      offset = start;
      break;
    }
  }
  if (offset === undefined) return;
  const marker = /^(---|\.\.\.)/gm;
  let at = 0;
  for (let m = marker.exec(text); m !== null; m = marker.exec(text)) {
    if (m.index >= offset) break;
    at = m.index;
  }
  throw new YamlDocumentsError(text.slice(0, at).split("\n").length - 1);
}

/**
 * Counts the nodes a document expands to when every alias is replaced by what
 * it names, and refuses one past `limit`: aliases cost nothing to parse but
 * multiply on every later use (serialisation, comparison).
 *
 * @param text The YAML text.
 * @param events Its parser events.
 * @param limit The most nodes allowed.
 * @throws {YamlBombError} When the expansion is larger.
 */
function checkExpansion(
  text: string,
  events: readonly yaml.Event[],
  limit: number,
): void {
  const { DOCUMENT, SEQUENCE, MAPPING, SCALAR, ALIAS, POP } = yaml.EVENT_ID;
  const sizes = new Map<string, number>();
  const stack: Array<{ size: number; anchor: string | undefined }> = [];
  const nameOf = (start: number, end: number) =>
    start < 0 ? undefined : text.slice(start, end).replace(/^[&*]/, "");
  let total = 0;
  const add = (n: number) => {
    const top = stack[stack.length - 1];
    if (top !== undefined) top.size += n;
    else total += n;
    if (total > limit || (top !== undefined && top.size > limit)) {
      throw new YamlBombError(
        `its aliases expand to more than ${limit} nodes (a YAML bomb?)`,
      );
    }
  };
  for (const event of events) {
    if (event.type === DOCUMENT) continue;
    if (event.type === MAPPING || event.type === SEQUENCE) {
      stack.push({
        size: 1,
        anchor: nameOf(event.anchorStart, event.anchorEnd),
      });
    } else if (event.type === SCALAR) {
      const anchor = nameOf(event.anchorStart, event.anchorEnd);
      if (anchor !== undefined) sizes.set(anchor, 1);
      add(1);
    } else if (event.type === ALIAS) {
      add(sizes.get(nameOf(event.anchorStart, event.anchorEnd) ?? "") ?? 1);
    } else if (event.type === POP) {
      const frame = stack.pop();
      if (frame === undefined) continue; // the document's own end
      if (frame.anchor !== undefined) sizes.set(frame.anchor, frame.size);
      add(frame.size);
    }
  }
}

/**
 * Loads a YAML document, refusing deep nesting and alias bombs. An integer
 * past 2^53 is a `bigint`, its digits all kept (a number would round them).
 *
 * @param text The YAML text.
 * @param filename For the parser's messages.
 * @returns The value.
 * @throws {yaml.YAMLException} On a syntax error or nesting past 256 levels.
 * @throws {YamlBombError} When aliases expand past {@linkcode MAX_NODES} nodes.
 */
export function loadYaml(text: string, filename: string): unknown {
  const events = yaml.parseEvents(text, { filename, maxDepth: 256 });
  checkExpansion(text, events, MAX_NODES);
  checkOneDocument(text, events);
  checkPlainKeys(text, events);
  return construct(text, events, {
    source: text,
    filename,
    schema: EXACT_SCHEMA,
    maxAliases: -1,
  });
}

/**
 * The document's value, a key given twice in one mapping named: the parser
 * says "duplicated mapping key" without saying which.
 */
function construct(
  text: string,
  events: ReturnType<typeof yaml.parseEvents>,
  options: Parameters<typeof yaml.constructFromEvents>[1],
): unknown {
  try {
    return yaml.constructFromEvents(events, options)[0];
  } catch (error) {
    const mark = (error as { mark?: { line: number; position: number } }).mark;
    if (
      !(error instanceof yaml.YAMLException) ||
      error.reason !== "duplicated mapping key" || mark === undefined
    ) throw error;
    const key = events.find((event): event is yaml.ScalarEvent =>
      event.type === yaml.EVENT_ID.SCALAR &&
      event.valueStart <= mark.position && mark.position <= event.valueEnd
    );
    if (key === undefined) throw error;
    throw new YamlRefusedError(
      `key ${
        JSON.stringify(yaml.getScalarValue(text, key))
      } appears twice in one mapping: keep one`,
      mark.line,
    );
  }
}

/**
 * YAML with source positions, so a config error can name its line.
 *
 * @module
 */

import * as yaml from "js-yaml";

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
  const value = yaml.constructFromEvents(events, {
    source: text,
    filename,
    maxAliases: 100,
  })[0];
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

/**
 * Environment files: `KEY=VALUE` lines (dotenv's format) read into the
 * environment before a suite loads, so that API keys live in a file the
 * config never holds.
 *
 * @module
 */

import { InputError, osErrorText } from "../base/errors.ts";
import { readUtf8File } from "../io/utf8.ts";

/**
 * Where variables are read from and set: `Deno.env`, or a map of your own.
 *
 * @example A map standing in for the environment
 * ```ts
 * import type { EnvTarget } from "./mod.ts";
 * const vars = new Map<string, string>();
 * const env: EnvTarget = { get: (k) => vars.get(k), set: (k, v) => void vars.set(k, v) };
 * env.set("KEY", "v");
 * if (env.get("KEY") !== "v") throw new Error("unexpected");
 * ```
 */
export interface EnvTarget {
  /**
   * The variable's value, when set.
   *
   * @param name The variable.
   * @returns Its value, or `undefined`.
   */
  get(name: string): string | undefined;
  /**
   * Sets a variable.
   *
   * @param name The variable.
   * @param value Its value.
   */
  set(name: string, value: string): void;
}

/**
 * Reads an environment file (dotenv's format: `KEY=VALUE`, `export KEY=...`,
 * quotes, `#` comments) into the environment. A variable already set wins:
 * the file gives defaults, the shell overrides them. Values are never
 * printed.
 *
 * @param path The file.
 * @param env Where to set them.
 * @returns The names the file set, in its order (not those already set).
 * @throws {InputError} When the file cannot be read, naming it and why.
 *
 * @example A key kept out of the config
 * ```ts
 * import { loadEnvFile } from "./mod.ts";
 * const dir = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${dir}/.env`, "JUDGE_KEY=sk-abc\n# a comment\nHOME=/elsewhere\n");
 * const env = new Map([["HOME", "/root"]]);
 * const set = await loadEnvFile(`${dir}/.env`, { get: (k) => env.get(k), set: (k, v) => void env.set(k, v) });
 * if (set.join() !== "JUDGE_KEY" || env.get("HOME") !== "/root") throw new Error("unexpected");
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadEnvFile(
  path: string,
  env: EnvTarget = Deno.env,
): Promise<string[]> {
  let text: string;
  try {
    text = await readUtf8File(path);
  } catch (error) {
    throw new InputError(
      `Cannot read env file ${JSON.stringify(path)}: ${osErrorText(error)}`,
    );
  }
  const { default: dotenv } = await import("dotenv");
  const set: string[] = [];
  for (const [name, value] of Object.entries(dotenv.parse(text))) {
    if (env.get(name) !== undefined) continue;
    env.set(name, value);
    set.push(name);
  }
  return set;
}

// Where `--baseline NAME` reads: a saved baseline's name, or a file the user
// named without a "/" (`--baseline scores.ndjson`).

import { InputError, isOsError } from "../base/errors.ts";
import { resolveIn } from "../process/command.ts";
import { baselinePath } from "./baseline.ts";

/**
 * The file `--baseline` reads: a path as given; a name's saved baseline
 * when there is one, else a file of that name in the current folder (as
 * `./NAME` would be read). A name that is neither, but a file beside the
 * config, is an error that says so.
 *
 * @param nameOrPath What `--baseline` was given.
 * @param configFolder The config's folder.
 * @returns The file to read.
 * @throws {InputError} When a name is a file beside the config only.
 */
export async function baselineToRead(
  nameOrPath: string,
  configFolder: string,
): Promise<string> {
  const saved = baselinePath(nameOrPath, configFolder);
  if (saved === nameOrPath || await isFile(saved)) return saved;
  if (await isFile(nameOrPath)) return nameOrPath;
  const beside = resolveIn(configFolder, nameOrPath);
  if (beside !== nameOrPath && await isFile(beside)) {
    throw new InputError(
      `Cannot read baseline ${
        JSON.stringify(saved)
      }: no such file (save one with run --save-baseline NAME; ${
        JSON.stringify(beside)
      } is a file beside the config: give its path, --baseline ${beside})`,
    );
  }
  return saved;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch (error) {
    // Missing or unreadable: not a file to read instead; readBaseline names
    // why when it is the one read.
    if (!isOsError(error)) throw error;
    return false;
  }
}

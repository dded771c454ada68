// Why an output path that the system will not open is no file, in our
// words: loaded only once an open has failed.

import { isOsError } from "../base/errors.ts";

/**
 * What a path that cannot be opened to write is, when it is a kind of thing
 * no write can go to: a socket (opening one says "No such device or
 * address"). `undefined` for anything else (a file, a folder, a FIFO, a
 * device, nothing there), whose error says why in its own words.
 */
export async function notAFileText(path: string): Promise<string | undefined> {
  try {
    return (await Deno.stat(path)).isSocket
      ? "it is a socket, not a file: give the path of a file"
      : undefined;
  } catch (error) {
    // Not there, or not reachable: the open's own error says which.
    if (!isOsError(error)) throw error;
    return undefined;
  }
}

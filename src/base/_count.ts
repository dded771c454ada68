// The check of a count a stage's options give (concurrency, epochs, a cap):
// a bad one refused as the stage is built, rather than read as something else
// (NaN epochs ran nothing, concurrency NaN had no bound at all).

/**
 * `value`, when it is a whole number of at least 1.
 *
 * @param option The option's name, for the message.
 * @param value The value given.
 * @returns The value.
 * @throws {RangeError} Naming the option and the value, otherwise.
 */
export function countOption(option: string, value: number): number {
  return wholeOption(option, value, 1);
}

/**
 * `value`, when it is a whole number of at least 0 (a limit, a sample's size).
 *
 * @param option The option's name, for the message.
 * @param value The value given.
 * @returns The value.
 * @throws {RangeError} Naming the option and the value, otherwise.
 */
export function sizeOption(option: string, value: number): number {
  return wholeOption(option, value, 0);
}

/** `value`, when it is a whole number of at least `least`; else a RangeError. */
function wholeOption(option: string, value: number, least: number): number {
  if (Number.isSafeInteger(value) && value >= least) return value;
  throw new RangeError(
    `The "${option}" option must be a whole number of at least ${least}, not ${
      typeof value === "string" ? JSON.stringify(value) : String(value)
    }`,
  );
}

/**
 * The evalpipe command line: `run`, `score`, `aggregate`, `view` and `diff`
 * (see `evalpipe --help`). Stdout carries data only (NDJSON); everything for
 * people goes to stderr. Exit codes: 0 success, 1 the run finished but a
 * gate failed, 2 usage, config or input error, 130/143 interrupted.
 *
 * @example
 * ```sh
 * deno run -A cli.ts run examples/quickstart/evalpipe.yaml > scores.ndjson
 * ```
 *
 * @module
 */

import { main } from "./src/cli/main.ts";

export { main };

if (import.meta.main) Deno.exit(await main(Deno.args));

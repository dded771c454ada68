// deno-lint-ignore-file no-process-global no-console
// evalpipe_persistent: serve a per-case scorer function as a persistent scorer.
//
// evalpipe's persistent scorer mode (`persistent: true` on a `type: subprocess`
// scorer, or `evalpipe score --persistent`) starts the command once and keeps
// it running. It writes one protocol v0 payload per line on stdin, as compact
// JSON, and reads one verdict per line on stdout, in the same order:
//
//   {"score": 0.9, "passed": true, "reason": "..."}   the verdict
//   {"error": "TypeError: ..."}                         this case failed
//
// `serve(scoreCase)` does the line handling, Node only, no dependencies:
//
//   const { serve } = require("./evalpipe_persistent.js");
//   serve((payload) => ({ score: 1, reason: "looks fine" }));
//
// `scoreCase` gets the payload as an object and returns the verdict (or a
// promise of it). Cases may run concurrently, but verdicts are written in the
// order the payloads came. If it throws or rejects, that case alone fails with
// `{"error": "<ErrorName>: <message>"}`. Stdout belongs to the protocol: while
// `serve` runs, console.log and process.stdout.write go to stderr instead.
"use strict";

const readline = require("node:readline");

function errorLine(error) {
  const message = error instanceof Error
    ? `${error.name}: ${error.message}`
    : String(error);
  return JSON.stringify({ error: message });
}

async function verdictLine(scoreCase, line) {
  try {
    const verdict = await scoreCase(JSON.parse(line));
    if (typeof verdict !== "object" || verdict === null) {
      throw new TypeError(
        `the scorer returned ${
          verdict === null ? "null" : typeof verdict
        }, not an object with "score"`,
      );
    }
    return JSON.stringify(verdict);
  } catch (error) {
    return errorLine(error);
  }
}

function serve(scoreCase) {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout);
  // Stray output goes to stderr: a line on stdout would be read as a verdict.
  stdout.write = process.stderr.write.bind(process.stderr);
  for (const name of ["log", "info", "debug", "dir", "table"]) {
    console[name] = console.error.bind(console);
  }
  stdout.on("error", (error) => {
    // evalpipe closed our stdout: nobody is left to answer.
    if (error.code === "EPIPE") process.exit(0);
    throw error;
  });
  const lines = readline.createInterface({ input: process.stdin });
  let previous = Promise.resolve();
  lines.on("line", (line) => {
    const verdict = verdictLine(scoreCase, line); // starts now
    previous = previous.then(async () => {
      write(`${await verdict}\n`); // written in input order
    });
  });
}

module.exports = { serve };

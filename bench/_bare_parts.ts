// Pieces the bare programs of bench/ share, so that each is written once.
// Like those programs, this imports nothing of src/: what they measure is
// Deno's own cost, not evalpipe's.

/** A case's fields that the subprocess scorer protocol's payload carries. */
export interface BareCase {
  input: string;
  output: string;
  expected?: string;
}

/**
 * The verdict's score of one `sh -c CMD` given the protocol v0 payload of
 * `c` on stdin, as `score --scorer` gets it.
 */
export async function shScore(cmd: string, c: BareCase): Promise<number> {
  const child = new Deno.Command("sh", {
    args: ["-c", cmd],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(
    new TextEncoder().encode(JSON.stringify({
      expected: c.expected,
      input: c.input,
      output: c.output,
    })),
  );
  await w.close();
  const out = await child.output();
  return JSON.parse(new TextDecoder().decode(out.stdout)).score;
}

/**
 * The NDJSON line of an `exact_match` Score (its reason always given, as
 * the limit programs write it), without the newline.
 */
export function exactMatchLine(
  id: string,
  value: number,
  expected: string | undefined,
): string {
  return JSON.stringify({
    metric: "exact_match",
    status: "scored",
    validity: "valid",
    value,
    passed: value === 1,
    reason: `expected ${JSON.stringify(expected)}`,
    evaluator_version: "exact_match@1",
    example_id: id,
    unit_id: id,
    diagnostics: [],
    evidence_refs: [],
  });
}

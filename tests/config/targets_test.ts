import assert from "node:assert/strict";
import {
  checkConfigText,
  epochsOf,
  selectTargets,
} from "../../src/config/mod.ts";
import { InputError } from "../../src/base/errors.ts";
import { configError } from "./_config_error.ts";

const SCORERS = "scorers: [{ type: exact_match }]\n";
const TWO = "dataset: d.jsonl\ntargets:\n  fast: { type: replay }\n" +
  "  slow: { type: subprocess, cmd: cat }\n" + SCORERS;

Deno.test("checkConfigText takes targets: as a map of named targets", async () => {
  const config = await checkConfigText(TWO, "suite.yaml");
  assert.deepEqual(config.targets, {
    fast: { type: "replay" },
    slow: { type: "subprocess", cmd: "cat" },
  });
  assert.equal(config.target, undefined);
});

Deno.test("checkConfigText refuses target: and targets: together, at targets's line", async () => {
  const error = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\ntargets:\n  a: { type: replay }\n" +
      SCORERS,
  );
  assert.equal(
    error.message,
    'Invalid config "suite.yaml" line 3: give either "target" (one system) or "targets" (several, by name), not both',
  );
});

Deno.test("checkConfigText refuses a config with neither target: nor targets:", async () => {
  const error = await configError("dataset: d.jsonl\n" + SCORERS);
  assert.equal(
    error.message,
    'Invalid config "suite.yaml": "target" is missing (or "targets", several by name)',
  );
});

Deno.test("checkConfigText refuses a target name that cannot end a unit id", async () => {
  const error = await configError(
    "dataset: d.jsonl\ntargets:\n  fast: { type: replay }\n  'a~b': { type: replay }\n" +
      SCORERS,
  );
  assert.equal(error.line, 4);
  assert.match(error.message, /target name "a~b" must be letters, digits/);
});

Deno.test("checkConfigText refuses an empty targets: map", async () => {
  const error = await configError("dataset: d.jsonl\ntargets: {}\n" + SCORERS);
  assert.match(error.message, /"targets" must name at least one target/);
});

Deno.test("checkConfigText refuses a matrix: naming an unknown target, or one twice", async () => {
  const unknown = await configError(TWO + "matrix: [fast, medium]\n");
  assert.equal(unknown.line, 6);
  assert.equal(
    unknown.message,
    'Invalid config "suite.yaml" line 6: "matrix" names "medium", which is not a target; the targets are "fast", "slow"',
  );
  const twice = await configError(TWO + "matrix: [fast, fast]\n");
  assert.match(twice.message, /"matrix" names "fast" twice/);
  const single = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nmatrix: [a]\n" + SCORERS,
  );
  assert.match(single.message, /this config has one "target"/);
});

Deno.test("selectTargets picks by --target, --matrix, matrix:, or the only target", async () => {
  const config = await checkConfigText(TWO, "suite.yaml");
  assert.deepEqual(
    selectTargets(config, "suite.yaml", { target: "slow" }).map((t) => t.name),
    ["slow"],
  );
  assert.deepEqual(
    selectTargets(config, "suite.yaml", { matrix: ["slow", "fast"] }).map((
      t,
    ) => t.name),
    ["slow", "fast"],
  );
  const withMatrix = await checkConfigText(
    TWO + "matrix: [fast, slow]\n",
    "suite.yaml",
  );
  assert.deepEqual(
    selectTargets(withMatrix, "suite.yaml").map((t) => t.name),
    ["fast", "slow"],
  );
  // --matrix overrides matrix:.
  assert.deepEqual(
    selectTargets(withMatrix, "suite.yaml", { matrix: ["slow"] }).map((t) =>
      t.name
    ),
    ["slow"],
  );
  const one = await checkConfigText(
    "dataset: d.jsonl\ntargets:\n  only: { type: replay }\n" + SCORERS,
    "suite.yaml",
  );
  assert.deepEqual(selectTargets(one, "suite.yaml").map((t) => t.name), [
    "only",
  ]);
});

Deno.test("selectTargets names what is wrong with a choice, as an input error", async () => {
  const config = await checkConfigText(TWO, "suite.yaml");
  const fails = (f: () => unknown) => {
    try {
      f();
    } catch (error) {
      assert.ok(error instanceof InputError);
      assert.equal(error.exitCode, 2);
      return error.message;
    }
    throw new Error("expected an error");
  };
  assert.equal(
    fails(() => selectTargets(config, "suite.yaml")),
    'The config "suite.yaml" has several targets: pick one with --target NAME or --matrix a,b, or set "matrix:"; the targets are "fast", "slow"',
  );
  assert.equal(
    fails(() => selectTargets(config, "suite.yaml", { target: "medium" })),
    '--target names "medium", which is not a target in "suite.yaml"; the targets are "fast", "slow"',
  );
  assert.match(
    fails(() =>
      selectTargets(config, "suite.yaml", { target: "fast", matrix: ["slow"] })
    ),
    /not both/,
  );
  assert.match(
    fails(() =>
      selectTargets(config, "suite.yaml", { matrix: ["fast", "fast"] })
    ),
    /names "fast" twice/,
  );
  const single = await checkConfigText(
    "dataset: d.jsonl\ntarget: { type: replay }\n" + SCORERS,
    "suite.yaml",
  );
  assert.match(
    fails(() => selectTargets(single, "suite.yaml", { target: "a" })),
    /has one "target"/,
  );
});

Deno.test("checkConfigText takes epochs as a count or as { n, require }", async () => {
  const base = "dataset: d.jsonl\ntarget: { type: replay }\n" + SCORERS;
  const count = await checkConfigText(base + "epochs: 3\n", "suite.yaml");
  assert.deepEqual(epochsOf(count), { n: 3, require: undefined });
  for (const require of ["all", "majority", "any"]) {
    const mapped = await checkConfigText(
      base + `epochs: { n: 5, require: ${require} }\n`,
      "suite.yaml",
    );
    assert.deepEqual(mapped.epochs, { n: 5, require });
    assert.deepEqual(epochsOf(mapped), { n: 5, require });
  }
  const bare = await checkConfigText(base + "epochs: { n: 2 }\n", "suite.yaml");
  assert.deepEqual(epochsOf(bare), { n: 2, require: undefined });
  assert.deepEqual(
    epochsOf(await checkConfigText(base, "suite.yaml")),
    { n: undefined, require: undefined },
  );
});

Deno.test("checkConfigText refuses an epochs mapping without n or with another require", async () => {
  const base = "dataset: d.jsonl\ntarget: { type: replay }\n" + SCORERS;
  const wrong = await configError(
    base + "epochs: { n: 5, require: most }\n",
  );
  assert.equal(wrong.line, 4);
  assert.match(
    wrong.message,
    /"epochs\.require" is string "most"; expected one of all, majority, any$/,
  );
  const missing = await configError(base + "epochs: { require: all }\n");
  assert.equal(missing.line, 4);
  assert.match(missing.message, /"epochs\.n" is missing/);
});

import assert from "node:assert/strict";
import { join } from "node:path";
import { duplicateScorerName } from "../../src/scorers/mod.ts";
import { configError } from "../config/_config_error.ts";
import { cli } from "../_cli.ts";

Deno.test("duplicateScorerName finds the first name given twice, skipping names not known yet", () => {
  assert.equal(duplicateScorerName([]), undefined);
  assert.equal(
    duplicateScorerName(["a", undefined, undefined, "b"]),
    undefined,
  );
  assert.deepEqual(duplicateScorerName(["a", "b", undefined, "b", "a"]), {
    name: "b",
    first: 1,
    second: 3,
  });
});

Deno.test("the config check and buildScorers refuse two scorers with one name, by the same rule", async () => {
  // Named in the config: refused by the check, at the second scorer's line.
  const named = await configError(
    "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: contains\n    name: m\n  - type: exact_match\n    name: m\n",
  );
  assert.match(
    named.message,
    /line 6: two scorers are named "m"; give one a "name"$/,
  );
  // Named once resolved (a subprocess scorer by its script): refused when
  // built, through the command line (building it loads libc in this process),
  // at the second scorer's line all the same.
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_config_test_" });
  try {
    await Deno.writeTextFile(
      join(dir, "suite.yaml"),
      "dataset: d.jsonl\ntarget: { type: replay }\nscorers:\n  - type: exact_match\n  - type: subprocess\n    cmd: ./exact_match.sh\n",
    );
    await Deno.writeTextFile(join(dir, "exact_match.sh"), "#!/bin/sh\n");
    await Deno.writeTextFile(
      join(dir, "d.jsonl"),
      '{"input":"a","output":"a"}\n',
    );
    const { code, stderr } = await cli(["run", "suite.yaml"], dir);
    assert.equal(code, 2);
    assert.equal(
      stderr.trim(),
      'evalpipe: Invalid config "suite.yaml" line 5: two scorers are named "exact_match"; give one a "name"',
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the score command refuses two scorers with one name, by the same rule", async () => {
  const dir = await Deno.makeTempDir({ prefix: "evalpipe_score_names_" });
  try {
    for (const folder of ["a", "b"]) {
      await Deno.mkdir(join(dir, folder));
      await Deno.writeTextFile(
        join(dir, folder, "grounded.sh"),
        "cat >/dev/null; echo '{\"score\": 1}'\n",
      );
    }
    const { code, stdout, stderr } = await cli(
      ["score", "--scorer", "sh a/grounded.sh", "--scorer", "sh b/grounded.sh"],
      dir,
    );
    assert.equal(code, 2);
    assert.equal(stdout, "");
    assert.match(
      stderr,
      /^evalpipe: Two scorers are named "grounded": give one a --name$/m,
    );
    // Told apart by --name, the same two commands are accepted.
    const named = await cli(
      [
        "score",
        "--scorer",
        "sh a/grounded.sh",
        "--name",
        "a",
        "--scorer",
        "sh b/grounded.sh",
        "--name",
        "b",
      ],
      dir,
    );
    assert.equal(named.code, 0, named.stderr);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("the score command refuses an empty --name as a usage error, in both modes", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await Deno.writeTextFile(
      join(dir, "ok.sh"),
      "cat > /dev/null; echo '{\"score\": 1}'\n",
    );
    for (const mode of [[], ["--persistent"]]) {
      for (const name of ["", "  "]) {
        const out = await cli(
          ["score", ...mode, "--scorer", "sh ok.sh", "--name", name],
          dir,
        );
        assert.equal(out.code, 2, out.stderr);
        assert.equal(out.stdout, "");
        assert.match(
          out.stderr,
          /^evalpipe: --name must not be empty: it names the metric\n/,
        );
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

// The RAG and quality judges from the command line: `run` and `score
// --config` with a suite whose judges talk to a loopback server speaking the
// OpenAI chat completions API, and the config errors a user can make.

import assert from "node:assert/strict";
import { cli, cliWithStdin } from "../_cli.ts";
import { fakeLlm, lastMessage, reply } from "../_fake_llm.ts";
import { withTempDir } from "../_proc.ts";

function judgeServer() {
  return fakeLlm({
    handler(request) {
      const prompt = lastMessage(request);
      if (prompt.includes("Rubric:\nAnswer in one word.")) {
        return reply.ok('{"score": 3, "reason": "two words"}');
      }
      if (prompt.includes("Answer:\nOslo.")) {
        return reply.ok(
          '{"claims": [{"claim": "The capital of Norway is Oslo.", "supported": true}]}',
        );
      }
      return reply.ok("No idea.");
    },
  });
}

async function suite(dir: string, scorers: string): Promise<void> {
  await Deno.writeTextFile(
    `${dir}/suite.yaml`,
    `dataset: cases.jsonl\ntarget: { type: replay }\nscorers:\n${scorers}`,
  );
  await Deno.writeTextFile(
    `${dir}/cases.jsonl`,
    [
      {
        input: "Capital of Norway?",
        output: "Oslo.",
        context: ["Oslo is Norway's capital."],
      },
      { input: "Capital of Norway?", output: "Bergen, I think." },
    ].map((c) => JSON.stringify(c) + "\n").join(""),
  );
}

Deno.test("run scores a suite of judges: values, not-applicable and error Scores, provenance", async () => {
  await using server = judgeServer();
  await withTempDir(async (dir) => {
    await Deno.mkdir(`${dir}/rubrics`);
    await Deno.writeTextFile(
      `${dir}/rubrics/short.md`,
      "Answer in one word.\n",
    );
    await suite(
      dir,
      `  - { type: faithfulness, model: judge, base_url: "${server.baseUrl}" }\n` +
        `  - { type: rubric, name: short, file: rubrics/short.md, scale: [1, 5], model: judge, base_url: "${server.baseUrl}" }\n`,
    );
    const out = await cli(["run", "suite.yaml"], dir);
    assert.equal(out.code, 0, out.stderr);
    const scores = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    const by = (id: string, metric: string) =>
      scores.find((s) => s.example_id === id && s.metric === metric);
    const f1 = by("cases.jsonl#1", "faithfulness");
    assert.equal(f1.value, 1);
    assert.equal(f1.provenance.judge_model, "judge");
    assert.ok(f1.provenance.usage.total_tokens > 0);
    // The second case has no context: not applicable, and no call for it.
    const f2 = by("cases.jsonl#2", "faithfulness");
    assert.equal(f2.status, "non_evaluable");
    assert.equal(f2.reason, "not applicable: the case has no context");
    const r1 = by("cases.jsonl#1", "short");
    assert.equal(r1.value, 0.5);
    assert.equal(r1.reason, "two words");
    assert.equal(server.count, 3);
  });
});

Deno.test("score --config runs the suite's judges on unit records; an unreadable reply is an error Score", async () => {
  await using server = judgeServer();
  await withTempDir(async (dir) => {
    await suite(
      dir,
      `  - { type: faithfulness, model: judge, base_url: "${server.baseUrl}" }\n`,
    );
    const units = [
      { input: "q", output: "Oslo.", context: ["Oslo is Norway's capital."] },
      { input: "q", output: "Bergen.", context: ["Oslo is Norway's capital."] },
    ].map((u) => JSON.stringify(u) + "\n").join("");
    const out = await cliWithStdin(
      ["score", "--config", "suite.yaml"],
      dir,
      units,
    );
    assert.equal(out.code, 0, out.stderr);
    const [ok, bad] = out.stdout.trim().split("\n").map((l) => JSON.parse(l));
    assert.equal(ok.value, 1);
    assert.equal(bad.status, "error");
    assert.equal(bad.diagnostics[0].code, "judge.unparsable");
    assert.match(
      bad.reason,
      /^scorer error: the judge's reply holds no JSON object: "No idea\."$/,
    );
  });
});

Deno.test("run: a judge's missing rubric file or unset API key variable is a config error, before any call", async () => {
  await using server = judgeServer();
  await withTempDir(async (dir) => {
    await suite(
      dir,
      "  - { type: exact_match }\n" +
        `  - { type: rubric, file: rubrics/gone.md, model: judge, base_url: "${server.baseUrl}" }\n`,
    );
    const gone = await cli(["run", "suite.yaml"], dir);
    assert.equal(gone.code, 2);
    assert.equal(gone.stdout, "");
    assert.match(
      gone.stderr,
      /suite\.yaml" line 5: "scorers\[1\]\.file": cannot read the rubric "rubrics\/gone\.md": no such file/,
    );
    await suite(
      dir,
      `  - { type: correctness, model: judge, base_url: "${server.baseUrl}", api_key_env: EVALPIPE_TEST_UNSET_KEY }\n`,
    );
    const key = await cli(["run", "suite.yaml"], dir);
    assert.equal(key.code, 2);
    assert.match(key.stderr, /EVALPIPE_TEST_UNSET_KEY is not set/);
    assert.equal(server.count, 0);
  });
});

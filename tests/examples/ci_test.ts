// The CI integration runs as its files say: the GitHub Actions example's
// steps (the composite action.yml they use, its `run:` scripts with their
// `env:` and inputs filled in as the runner fills them) and the GitLab CI
// example's `before_script:` and `script:` lines are read with js-yaml and
// run in a temporary copy of the examples, with GITHUB_STEP_SUMMARY and
// GITHUB_OUTPUT set. `uses:` steps (checkout, setup-deno, upload-artifact)
// are the runner's: what they would upload is checked to exist. The suite
// replays its committed cache: no key, no network.

import assert from "node:assert/strict";
import { load } from "js-yaml";
import { withTempDir } from "../_proc.ts";

const ROOT = new URL("../../", import.meta.url).pathname.replace(/\/$/, "");

interface Step {
  name?: string;
  id?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
}

interface Action {
  inputs: Record<string, { default?: string; required?: boolean }>;
  runs: { using: string; steps: Step[] };
}

const readYaml = async (path: string) =>
  load(await Deno.readTextFile(`${ROOT}/${path}`)) as Record<string, unknown>;

async function copyExamples(workspace: string): Promise<void> {
  await Deno.mkdir(`${workspace}/examples`, { recursive: true });
  const { code } = await new Deno.Command("cp", {
    args: ["-a", `${ROOT}/examples/ci`, `${workspace}/examples/ci`],
  }).output();
  assert.equal(code, 0);
}

/** Runs a script as a `run:` step of `shell: bash` runs it. */
async function bash(
  script: string,
  cwd: string,
  env: Record<string, string>,
): Promise<{ code: number; stderr: string }> {
  const { code, stderr } = await new Deno.Command("bash", {
    args: ["--noprofile", "--norc", "-eo", "pipefail", "-c", script],
    cwd,
    env: { NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  return { code, stderr: new TextDecoder().decode(stderr) };
}

/** `${{ inputs.NAME }}` in a value, as the runner fills it. */
function fill(text: string, inputs: Record<string, string>): string {
  return text.replace(
    /\$\{\{\s*inputs\.([\w-]+)\s*\}\}/g,
    (_, name: string) => {
      assert.ok(name in inputs, `unknown input ${name}`);
      return inputs[name]!;
    },
  );
}

/** Runs the composite action's steps; returns what upload-artifact would keep. */
async function runAction(
  action: Action,
  given: Record<string, string>,
  workspace: string,
  github: Record<string, string>,
): Promise<{ failed: boolean; uploads: string[]; stderr: string }> {
  assert.equal(action.runs.using, "composite");
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) {
    if (spec.required) assert.ok(name in given, `input ${name} is required`);
    inputs[name] = given[name] ?? spec.default ?? "";
  }
  for (const name of Object.keys(given)) {
    assert.ok(name in action.inputs, `the action has no input ${name}`);
  }
  let failed = false;
  let stderr = "";
  const uploads: string[] = [];
  for (const step of action.runs.steps) {
    // A step runs after a failure only with `if: always()`.
    if (failed && step.if !== "always()") continue;
    if (step.uses !== undefined) {
      if (step.uses.startsWith("actions/upload-artifact@")) {
        uploads.push(fill(step.with!.path!, inputs));
      }
      continue;
    }
    assert.equal(step.shell, "bash", step.name);
    const env = Object.fromEntries(
      Object.entries(step.env ?? {}).map(([k, v]) => [k, fill(v, inputs)]),
    );
    assert.doesNotMatch(step.run!, /\$\{\{/, "an expression in a script");
    const out = await bash(step.run!, workspace, {
      ...github,
      ...env,
      GITHUB_ACTION_PATH: ROOT,
    });
    stderr += out.stderr;
    if (out.code !== 0) failed = true;
  }
  return { failed, uploads, stderr };
}

async function githubJob(workspace: string) {
  const action = await readYaml("action.yml") as unknown as Action;
  const workflow = await readYaml("examples/ci/github-actions.yml") as {
    jobs: Record<string, { steps: Step[] }>;
  };
  const summary = `${workspace}/.step-summary.md`;
  const output = `${workspace}/.step-output`;
  await Deno.writeTextFile(summary, "");
  await Deno.writeTextFile(output, "");
  const github = {
    GITHUB_ACTIONS: "true",
    GITHUB_WORKSPACE: workspace,
    GITHUB_STEP_SUMMARY: summary,
    GITHUB_OUTPUT: output,
  };
  let result = { failed: false, uploads: [] as string[], stderr: "" };
  for (const step of workflow.jobs.evals!.steps) {
    if (step.uses === "./") {
      result = await runAction(action, step.with ?? {}, workspace, github);
    } else if (step.run !== undefined) {
      const out = await bash(step.run, workspace, github);
      assert.equal(out.code, 0, out.stderr);
    } else {
      // actions/checkout: the temporary copy is the checkout.
      assert.match(step.uses ?? "", /^actions\/checkout@/);
    }
  }
  return {
    ...result,
    summary: await Deno.readTextFile(summary),
    output: await Deno.readTextFile(output),
  };
}

const REPORTS = [
  "scores.ndjson",
  "run.json",
  "junit.xml",
  "summary.md",
  "report.html",
];

Deno.test("the GitHub Actions example runs the action: the suite replayed, its summary on the step summary, its reports uploaded", async () => {
  await withTempDir(async (workspace) => {
    await copyExamples(workspace);
    const job = await githubJob(workspace);
    assert.equal(job.failed, false, job.stderr);
    assert.match(job.output, /^exit-code=0$/m);
    assert.match(
      job.summary,
      /^## evalpipe: examples\/ci\/suite\/evalpipe\.yaml$/m,
    );
    assert.match(job.summary, /Cost: \$0 /);
    assert.match(job.stderr, /target cache: 3 hits, 0 calls/);
    assert.deepEqual(job.uploads, ["evalpipe-reports"]);
    for (const file of REPORTS) {
      await Deno.stat(`${workspace}/evalpipe-reports/${file}`);
    }
  });
});

Deno.test("the GitHub Actions example keeps the reports when the run fails, and says why", async () => {
  await withTempDir(async (workspace) => {
    await copyExamples(workspace);
    const config = `${workspace}/examples/ci/suite/evalpipe.yaml`;
    const text = await Deno.readTextFile(config);
    assert.ok(text.includes("min_mean: 0.7"));
    await Deno.writeTextFile(
      config,
      text.replace(
        "min_mean: 0.7",
        "min_mean: 0.95",
      ),
    );
    const job = await githubJob(workspace);
    assert.equal(job.failed, true);
    assert.match(job.output, /^exit-code=1$/m);
    assert.match(job.stderr, /^::error /m);
    assert.match(job.summary, /1 gate failed/);
    assert.deepEqual(job.uploads, ["evalpipe-reports"]);
    for (const file of REPORTS) {
      await Deno.stat(`${workspace}/evalpipe-reports/${file}`);
    }
  });
});

Deno.test("the GitLab CI example's script runs: replayed, reports kept always, JUnit for the merge request", async () => {
  await withTempDir(async (workspace) => {
    await copyExamples(workspace);
    const pipeline = await readYaml("examples/ci/gitlab-ci.yml") as Record<
      string,
      {
        variables: Record<string, string>;
        before_script: string[];
        script: string[];
        artifacts: {
          when: string;
          paths: string[];
          reports: { junit: string };
        };
      }
    >;
    const job = pipeline.evals!;
    const out = await bash(
      [...job.before_script, ...job.script].join("\n"),
      workspace,
      {
        ...job.variables,
        // evalpipe's checkout: this one, where the example says vendor/evalpipe.
        EVALPIPE: `${ROOT}/cli.ts`,
        CI: "true",
      },
    );
    assert.equal(out.code, 0, out.stderr);
    assert.match(out.stderr, /target cache: 3 hits, 0 calls/);
    assert.equal(job.artifacts.when, "always");
    for (const path of job.artifacts.paths) {
      await Deno.stat(`${workspace}/${path}`);
    }
    const junit = await Deno.readTextFile(
      `${workspace}/${job.artifacts.reports.junit}`,
    );
    assert.match(junit, /<testsuite /);
    for (const file of REPORTS) await Deno.stat(`${workspace}/reports/${file}`);
  });
});

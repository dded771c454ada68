import assert from "node:assert/strict";
import { openOut, stdoutWriter } from "../../src/io/mod.ts";

const STDOUT = new URL("../../src/io/stdout.ts", import.meta.url).href;

/** Which writer `stdoutWriter` picks in a child whose stdout is `redirect`. */
async function policyWith(
  redirect: string,
  permissions = "-A",
): Promise<string> {
  const dir = await Deno.makeTempDir();
  try {
    const script = `${dir}/probe.ts`;
    await Deno.writeTextFile(
      script,
      `import { stdoutWriter } from ${JSON.stringify(STDOUT)};\n` +
        `const w = stdoutWriter();\n` +
        `await w.write(new TextEncoder().encode("line\\n"));\n` +
        `console.error(w === Deno.stdout ? "async" : "sync");\n`,
    );
    const { code, stdout, stderr } = await new Deno.Command("sh", {
      args: [
        "-c",
        `"$0" run ${permissions} "$1" ${redirect}`,
        Deno.execPath(),
        script,
      ],
      cwd: dir,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const err = new TextDecoder().decode(stderr);
    assert.equal(code, 0, err);
    if (redirect.startsWith("> out")) {
      assert.equal(await Deno.readTextFile(`${dir}/out`), "line\n");
    } else if (redirect === "") {
      assert.equal(new TextDecoder().decode(stdout), "line\n");
    }
    return err.trim();
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("stdoutWriter writes synchronously to a file and /dev/null, asynchronously to a pipe", async () => {
  assert.equal(await policyWith("> out"), "sync");
  assert.equal(await policyWith("> /dev/null"), "sync");
  assert.equal(await policyWith(""), "async");
  assert.equal(await policyWith("| cat > /dev/null"), "async");
});

Deno.test("stdoutWriter without permission to read /proc writes asynchronously", async () => {
  assert.equal(await policyWith("> out", "--no-prompt"), "async");
  assert.equal(typeof stdoutWriter().write, "function");
});

Deno.test("openOut truncates a file, or appends to it with append", async () => {
  const path = await Deno.makeTempFile();
  try {
    await Deno.writeTextFile(path, "old\n");
    const bytes = new TextEncoder().encode("new\n");
    let out = await openOut(path);
    await out.write(bytes);
    out.close();
    assert.equal(await Deno.readTextFile(path), "new\n");
    out = await openOut(path, { append: true });
    await out.write(bytes);
    out.close();
    assert.equal(await Deno.readTextFile(path), "new\nnew\n");
  } finally {
    await Deno.remove(path);
  }
});

Deno.test("openOut with keep leaves a file as it was until it begins, and removes one it made that never began", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const path = `${dir}/o.ndjson`;
    await Deno.writeTextFile(path, "old\n");
    let out = await openOut(path, { keep: true });
    assert.equal(await Deno.readTextFile(path), "old\n", "kept once opened");
    out.close();
    assert.equal(await Deno.readTextFile(path), "old\n", "kept once closed");
    out = await openOut(path, { keep: true });
    await out.write(new TextEncoder().encode("new\n"));
    out.close();
    assert.equal(
      await Deno.readTextFile(path),
      "new\n",
      "emptied, then written",
    );
    out = await openOut(path, { keep: true });
    await out.begin();
    out.close();
    assert.equal(await Deno.readTextFile(path), "", "begun: emptied");
    const fresh = `${dir}/fresh.ndjson`;
    out = await openOut(fresh, { keep: true });
    out.close();
    await assert.rejects(Deno.stat(fresh), Deno.errors.NotFound);
    out = await openOut(fresh, { keep: true });
    await out.begin();
    out.close();
    assert.equal(await Deno.readTextFile(fresh), "", "begun: there, empty");
    await assert.rejects(
      openOut(`${dir}/no/such/folder.ndjson`, { keep: true }),
      /Cannot write .*no such folder/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

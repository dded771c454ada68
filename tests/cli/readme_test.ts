import assert from "node:assert/strict";
import { COMMANDS } from "../../src/cli/mod.ts";

const README = await Deno.readTextFile(
  new URL("../../README.md", import.meta.url),
);

Deno.test("the README's table of flags names every flag every command declares", () => {
  const section = README.slice(
    README.indexOf("### Commands and flags"),
    README.indexOf("### Exit codes"),
  );
  for (const command of COMMANDS) {
    const row = section.split("\n").find((l) =>
      l.startsWith(`| \`${command.name}\``) && l.includes("--")
    );
    assert.ok(row !== undefined, `no row of flags for ${command.name}`);
    for (const [name, flag] of Object.entries(command.flags)) {
      if (name === "help") continue;
      const long = flag.type === "boolean"
        ? `--${name}`
        : `--${name} ${flag.value ?? "N"}`;
      const shown = flag.short !== undefined
        ? `\`-${flag.short}, ${long}\``
        : `\`${long}\``;
      assert.ok(row.includes(shown), `${command.name} ${shown}`);
    }
  }
});

// renderTemplate splits each template once and reuses the split: the text
// it renders must be what filling each placeholder in turn gives, for every
// case it renders, and a missing field fails the same way.

import assert from "node:assert/strict";
import {
  redactClipped,
  renderTemplate,
  TemplateError,
} from "../../src/net/template.ts";

Deno.test("renderTemplate fills every placeholder, texts around them kept", () => {
  const template =
    "Q: {{input}}\nA: {{ output }}\n{{context}}|{{meta.topic}}{{input}}";
  const vars = {
    input: "why?",
    output: "because",
    context: ["a", "b"],
    meta: { topic: "t" },
  };
  assert.equal(
    renderTemplate(template, vars),
    "Q: why?\nA: because\na\n\nb|twhy?",
  );
});

Deno.test("renderTemplate renders one template for many cases, each with its own values", () => {
  const template = "<{{input}}> and {{n}}";
  for (let i = 0; i < 300; i++) {
    assert.equal(
      renderTemplate(template, { input: `q${i}`, n: i }),
      `<q${i}> and ${i}`,
    );
  }
});

Deno.test("renderTemplate keeps a text without placeholders, and braces that are not one", () => {
  assert.equal(renderTemplate("plain text", {}), "plain text");
  assert.equal(
    renderTemplate("{{ 1bad }} {x} {{input}}", { input: "q" }),
    "{{ 1bad }} {x} q",
  );
  assert.equal(renderTemplate("", { input: "q" }), "");
});

Deno.test("renderTemplate writes values that are not text as JSON", () => {
  assert.equal(
    renderTemplate("{{a}} {{b}} {{c}} {{d}}", {
      a: 1,
      b: { k: [1, "x"] },
      c: [1, 2],
      d: null,
    }),
    '1 {"k":[1,"x"]} [1,2] null',
  );
});

Deno.test("renderTemplate refuses a placeholder the case lacks, at any depth, inherited names included", () => {
  for (
    const [template, vars] of [
      ["{{missing}}", { input: "q" }],
      ["{{meta.none}}", { meta: {} }],
      ["{{input.length}}", { input: "q" }],
      ["{{constructor}}", {}],
      ["{{meta.toString}}", { meta: {} }],
    ] as const
  ) {
    assert.throws(
      () => renderTemplate(template, vars),
      (error: unknown) =>
        error instanceof TemplateError &&
        error.message ===
          `The template names ${template}, which this case does not have`,
      template,
    );
  }
});

Deno.test("renderTemplate names the field a misspelt placeholder meant, when the case has one near it", () => {
  assert.throws(
    () => renderTemplate("Q: {{inptu}}", { input: "q", context: [] }),
    (error: unknown) =>
      error instanceof TemplateError &&
      error.message ===
        "The template names {{inptu}}, which this case does not have; did you mean {{input}}?",
  );
});

Deno.test("renderTemplate points a placeholder naming a metadata field (a CSV column) at metadata.<field>", () => {
  const vars = { input: "q", metadata: { topic: "refunds" } };
  assert.equal(renderTemplate("{{metadata.topic}}", vars), "refunds");
  for (
    const [template, path] of [
      ["{{topic}}", "topic"],
      ["{{ topic.name }}", "topic.name"],
    ] as const
  ) {
    assert.throws(
      () => renderTemplate(`Q: ${template}`, vars),
      (error: unknown) =>
        error instanceof TemplateError &&
        error.message ===
          `The template names {{${path}}}, which this case does not have; did you mean {{metadata.${path}}}?`,
    );
  }
});

Deno.test("redactClipped cuts a server's answer between whole characters, never inside an emoji", () => {
  // A 500-character cut that falls between the two halves of "😀" left the
  // first, which JSON writes as the text \ud83d in a Score's reason.
  const answer = `${"x".repeat(499)}😀 and more`;
  const shown = redactClipped(answer, [], 500);
  assert.equal(shown, `${"x".repeat(499)}…`);
  assert.equal(redactClipped(answer, [], 501), `${"x".repeat(499)}😀…`);
  assert.equal(redactClipped(answer, [], 200, ""), "x".repeat(200));
});

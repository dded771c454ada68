// renderTemplate splits each template once and reuses the split: the text
// it renders must be what filling each placeholder in turn gives, for every
// case it renders, and a missing field fails the same way.

import assert from "node:assert/strict";
import {
  redactClipped,
  renderTemplate,
  TemplateError,
  unsetVariable,
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

Deno.test("unsetVariable names a variable whole, a key pasted in its place by its first four characters", () => {
  // Names written as words, however long, with digits at a part's end.
  for (
    const name of [
      "OPENAI_API_KEY_PROD_2024",
      "MyCompanyOpenAiKeyForTesting1",
      "AZURE_GPT4O_DEPLOYMENT_KEY_PROD",
      "my_team_openai_key_prod_2024",
    ]
  ) {
    assert.equal(
      unsetVariable(name).message,
      `The environment variable ${name} is not set`,
    );
  }
  // Keys: mixed case, and all one case (a hex key, a UUID) too.
  for (
    const key of [
      "gsk_AbCdEf0123456789XYZsecretKEY0123456789abcdef",
      "hf_QwErTy0123456789AsDfGhJkLzXcVbNm",
      "3f2a9c0b7e1d4a6f8b2c5e9d0a1b3c4d",
      "3f2a9c0b-7e1d-4a6f-8b2c-5e9d0a1b3c4d",
    ]
  ) {
    const message = unsetVariable(key).message;
    assert.ok(
      message.startsWith(
        `The environment variable ${
          key.slice(0, 4)
        }… is not set, and its name looks like a key`,
      ),
      message,
    );
    assert.ok(!message.includes(key.slice(0, 8)), message);
  }
});

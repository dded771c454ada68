/**
 * The JSON text evalglass's store writes, as Python's `json.dumps` makes
 * it; the expected texts here are what Python 3 printed for the same value.
 */

import assert from "node:assert/strict";
import {
  compareCodePoints,
  pythonCompactJson,
  pythonJson,
} from "../../src/evalglass/_python_json.ts";
import { evalglassRunDirName } from "../../src/evalglass/mod.ts";

const VALUE = {
  run_id: "r é/😀",
  scores: [{ value: 1.5, details: { "10": 1, "2": 2, b: null } }],
  empty: {},
  list: [],
};

Deno.test("pythonJson writes json.dumps(indent=2, sort_keys=True) and a newline", () => {
  assert.equal(
    pythonJson(VALUE),
    '{\n  "empty": {},\n  "list": [],\n  "run_id": "r \\u00e9/\\ud83d\\ude00",\n  "scores": [\n    {\n      "details": {\n        "10": 1,\n        "2": 2,\n        "b": null\n      },\n      "value": 1.5\n    }\n  ]\n}\n',
  );
});

Deno.test("pythonCompactJson writes json.dumps(sort_keys=True, separators=(',', ':'))", () => {
  assert.equal(
    pythonCompactJson(VALUE),
    '{"empty":{},"list":[],"run_id":"r \\u00e9/\\ud83d\\ude00","scores":[{"details":{"10":1,"2":2,"b":null},"value":1.5}]}',
  );
});

Deno.test("compareCodePoints orders as Python compares strings, astral characters after U+FFFF", () => {
  assert.ok(compareCodePoints("\uffff", "😀") < 0); // UTF-16 units would say otherwise
  assert.ok("\uffff" > "😀");
  assert.ok(compareCodePoints("a", "ab") < 0);
  assert.equal(compareCodePoints("x", "x"), 0);
});

Deno.test("evalglassRunDirName makes the folder name evalglass's store makes", () => {
  // As evalglass: re.sub(r"[^A-Za-z0-9._-]+", "_", id).strip("._") or "run"
  const cases: Array<[string, string]> = [
    ["20261201T080000Z-3f2a9c", "20261201T080000Z-3f2a9c"],
    ["../../etc/passwd", "etc_passwd"],
    ["a  b//c", "a_b_c"],
    ["_.x._", "x"],
    ["...", "run"],
    ["é", "run"],
  ];
  for (const [id, name] of cases) {
    assert.equal(evalglassRunDirName(id), name, id);
  }
});

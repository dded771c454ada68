// deno-lint-ignore-file no-process-global
// answer_match, as a persistent scorer: `node answer_match_persistent.js`.
//
// A condensed copy of ../quickstart/scorers/answer_match.js (which exports
// nothing, and reads stdin as soon as it is loaded), served by
// evalpipe_persistent: one process for the whole run. Both texts are
// normalised (NFKC, lower case, words only, number words as digits, plurals
// folded); 1.0 for the same words, 0.5 when at least half of the expected
// words and all of its numbers are there, else 0. It passes at 0.5.
"use strict";

const { serve } = require("./evalpipe_persistent.js");

const NUMBERS = new Map(
  ("zero one two three four five six seven eight nine ten eleven twelve " +
    "thirteen fourteen fifteen sixteen seventeen eighteen nineteen")
    .split(" ").map((w, i) => [w, i]),
);
"twenty thirty forty fifty sixty seventy eighty ninety".split(" ")
  .forEach((w, i) => NUMBERS.set(w, (i + 2) * 10));

function tokens(text) {
  const raw = text.normalize("NFKC").toLowerCase()
    .replace(/(\d),(?=\d{3}\b)/g, "$1")
    .match(/[a-z]+|\d+(?:[.:]\d+)*/g) ?? [];
  const out = [];
  for (let i = 0; i < raw.length; i++) {
    let n = NUMBERS.get(raw[i]);
    if (n === undefined) {
      const w = raw[i];
      out.push(
        w.length > 3 && w.endsWith("s") && !w.endsWith("ss")
          ? w.slice(0, -1)
          : w,
      );
      continue;
    }
    const unit = n >= 20 && n % 10 === 0 ? NUMBERS.get(raw[i + 1]) : undefined;
    if (unit > 0 && unit < 10) n += unit, i++;
    out.push(String(n));
  }
  return out;
}

function compare(expected, output) {
  const want = tokens(expected);
  const got = tokens(output);
  if (want.length === 0) return undefined;
  const shown = JSON.stringify(expected);
  if (want.length === got.length && want.every((t, i) => t === got[i])) {
    return { score: 1, reason: `exact match of ${shown}` };
  }
  const have = new Set(got);
  const distinct = [...new Set(want)];
  const found = distinct.filter((t) => have.has(t)).length;
  const numbersMissing = distinct.some((t) => /^\d/.test(t) && !have.has(t));
  const counts = `${found}/${distinct.length} expected words present`;
  return found / distinct.length >= 0.5 && !numbersMissing
    ? {
      score: 0.5,
      reason: `partial: ${counts}, not the exact answer ${shown}`,
    }
    : { score: 0, reason: `miss: ${counts} of ${shown}` };
}

function scoreCase({ expected, output }) {
  if (typeof output !== "string") {
    throw new TypeError('the payload has no string "output"');
  }
  // No expected answer: nothing to compare with, so the case is an error, not 0.
  if (expected === null || expected === undefined) {
    throw new Error("no expected answer to compare with");
  }
  const accepted = Array.isArray(expected) ? expected : [expected];
  let best;
  for (const a of accepted) {
    const r = compare(typeof a === "string" ? a : JSON.stringify(a), output);
    if (r !== undefined && (best === undefined || r.score > best.score)) {
      best = r;
    }
  }
  if (best === undefined) {
    throw new Error("the expected answer has no words to compare with");
  }
  return { score: best.score, passed: best.score >= 0.5, reason: best.reason };
}

serve(scoreCase);

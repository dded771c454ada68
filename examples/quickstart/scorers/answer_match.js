// deno-lint-ignore-file no-process-global
// answer_match: does the bot's answer say what the expected answer says?
//
// An evalpipe subprocess scorer (protocol v0) for Node, with no dependencies
// and no module syntax: `node scorers/answer_match.js`. It reads the whole
// payload from stdin, then prints exactly one verdict: {score, passed, reason}.
//
// Both texts are normalised first: Unicode NFKC, lower case, punctuation and
// whitespace dropped (words are compared, not characters), number words
// written as digits ("thirty" -> 30, "twenty-five" -> 25, "two-year" -> 2
// year), thousands separators removed, and plurals folded ("days" = "day").
//
//   1.0  exact: the normalised answers are the same words in the same order
//   0.5  partial: at least half of the expected answer's distinct words occur
//        in the output, and every number of the expected answer does (in a
//        support answer the number usually is the answer: "30 days" must not
//        half-match "45 days")
//   0.0  miss: anything else
//
// It passes at 0.5 or more: a verbose but correct answer passes, with a score
// that shows it was not the short canonical form.
//
// `expected` may be a string, a number, or a list of accepted answers (the
// best match counts); any other JSON value is compared as its JSON text.
//
// No expected answer (`expected` is null): there is nothing to compare with,
// so the case cannot be measured. Printing score 0 would record a failure that
// never happened and drag the mean down; printing 1 would invent a success.
// Protocol v0 has no "not applicable" verdict, so the honest outcome it offers
// is an error: this exits with status 3 and says why on stderr. evalpipe turns
// that into {"status": "error", "value": null, "reason": "scorer error: ..."},
// which the summary counts under errors and keeps out of the mean. (The
// built-in exact_match reports such cases as non_evaluable instead; a
// subprocess scorer cannot.)

const SMALL = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
  "thirteen",
  "fourteen",
  "fifteen",
  "sixteen",
  "seventeen",
  "eighteen",
  "nineteen",
];
const TENS = [
  "",
  "",
  "twenty",
  "thirty",
  "forty",
  "fifty",
  "sixty",
  "seventy",
  "eighty",
  "ninety",
];

function numberWord(word) {
  const small = SMALL.indexOf(word);
  if (small >= 0) return small;
  const tens = TENS.indexOf(word);
  return tens >= 2 ? tens * 10 : undefined;
}

function fold(word) {
  return word.length > 3 && word.endsWith("s") && !word.endsWith("ss")
    ? word.slice(0, -1)
    : word;
}

function isNumber(token) {
  return /^\d/.test(token);
}

/** The normalised words of a text. */
function tokens(text) {
  const raw = text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/(\d),(?=\d{3}\b)/g, "$1")
    .match(/[a-z]+|\d+(?:[.:]\d+)*/g) ?? [];
  const out = [];
  for (let i = 0; i < raw.length; i++) {
    let n = numberWord(raw[i]);
    if (n === undefined) {
      out.push(isNumber(raw[i]) ? raw[i] : fold(raw[i]));
      continue;
    }
    const unit = n >= 20 && n % 10 === 0
      ? numberWord(raw[i + 1] ?? "")
      : undefined;
    if (unit !== undefined && unit > 0 && unit < 10) {
      n += unit;
      i++;
    }
    out.push(String(n));
  }
  return out;
}

function compare(expectedText, output) {
  const want = tokens(expectedText);
  const got = tokens(output);
  if (want.length === 0) return undefined;
  const shown = JSON.stringify(expectedText);
  if (want.length === got.length && want.every((t, i) => t === got[i])) {
    const said = output.trim();
    return {
      score: 1,
      reason: said === expectedText.trim()
        ? `exact match of ${shown}`
        : `exact match of ${shown} once normalised (the output says ${
          JSON.stringify(said)
        })`,
    };
  }
  const have = new Set(got);
  const distinct = [...new Set(want)];
  const found = distinct.filter((t) => have.has(t));
  const missingNumbers = distinct.filter((t) => isNumber(t) && !have.has(t));
  const overlap = found.length / distinct.length;
  const counts = `${found.length}/${distinct.length} expected words present`;
  if (overlap >= 0.5 && missingNumbers.length === 0) {
    return {
      score: 0.5,
      reason: `partial: ${counts}, not the exact answer ${shown}`,
    };
  }
  if (missingNumbers.length > 0) {
    return {
      score: 0,
      reason: `miss: ${counts}; the number ${
        missingNumbers.join(", ")
      } of ${shown} is missing`,
    };
  }
  return { score: 0, reason: `miss: only ${counts} of ${shown}` };
}

function acceptedAnswers(expected) {
  if (Array.isArray(expected)) {
    return expected.map((e) => typeof e === "string" ? e : JSON.stringify(e));
  }
  if (typeof expected === "string") return [expected];
  if (typeof expected === "number" || typeof expected === "boolean") {
    return [String(expected)];
  }
  return [JSON.stringify(expected)];
}

function fail(message) {
  process.stderr.write(`answer_match: ${message}\n`);
  process.exitCode = 3;
}

function main(raw) {
  let payload;
  try {
    payload = JSON.parse(raw);
  } catch (error) {
    return fail(`the payload is not JSON: ${error.message}`);
  }
  if (typeof payload?.output !== "string") {
    return fail('the payload has no string "output"');
  }
  if (payload.expected === null || payload.expected === undefined) {
    return fail(
      "no expected answer to compare with; this case cannot be scored",
    );
  }
  let best;
  for (const accepted of acceptedAnswers(payload.expected)) {
    const result = compare(accepted, payload.output);
    if (
      result !== undefined && (best === undefined || result.score > best.score)
    ) best = result;
  }
  if (best === undefined) {
    return fail("the expected answer has no words to compare with");
  }
  process.stdout.write(
    JSON.stringify({
      score: best.score,
      passed: best.score >= 0.5,
      reason: best.reason,
    }) + "\n",
  );
}

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => {
  input += chunk;
});
process.stdin.on("end", () => main(input)); // score only once stdin is fully read

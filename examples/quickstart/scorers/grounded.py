#!/usr/bin/env python3
"""grounded: how much of the answer is backed by the retrieved context.

An evalpipe subprocess scorer (protocol v0), Python 3 standard library only.
It reads the whole payload from stdin first,

    {"context"?: [str, ...], "expected": ..., "input": str, "output": str}

and prints exactly one verdict line: {"score", "passed", "reason"}.

score = (content words of the output found in the context) / (content words of
the output). Content words are the output's words minus common function words,
with plurals folded ("days" matches "day") and numbers split at hyphens
("1-800-555-0142" is four numbers, each looked up). It passes at 0.75 or more:
at most one unsupported word in four.

Edge cases, decided so that a number is only reported when it was measured:

- No content words to check (an empty answer, "Yes", "No", or an abstention
  such as "I don't know"): the answer claims nothing the context could
  contradict, so it is vacuously grounded: score 1.0, and the reason says so.
  A bare "Yes" can still be wrong; that is answer_match's job, not this one's.
- No context (the key is absent or null, or the list holds only blank chunks)
  while the answer does make claims: nothing backs any of them, so the measured
  fraction really is 0 of N. That is a measurement, not a placeholder, so this
  prints score 0.0 with a reason naming the missing context rather than
  failing: a RAG answer given without retrieval is exactly what this metric
  exists to flag.
- A payload that is not JSON, or has no string "output": exit 2 with a message
  on stderr, which evalpipe records as a scorer error (value null), never as 0.
"""

import json
import re
import sys

PASS_AT = 0.75

FUNCTION_WORDS = frozenset(
    """a about after all also am an and any are as at be been before being both
    but by can could did do does doing each for from get got had has have he her
    here his how i if in into is it its just may me might more most must my no
    nor not of off on once only or other our ours out over own per same she
    should so some such than that the their theirs them then there these they
    this those through to too under until up us very was we were what when where
    which while who whom why will with would yes you your yours""".split()
)
ABSTENTION = re.compile(
    r"^\s*(?:i\s+(?:don't|do\s+not)\s+know|i'm\s+not\s+sure|i\s+am\s+not\s+sure)\b",
    re.IGNORECASE,
)
WORD = re.compile(r"[a-z0-9]+(?:['.][a-z0-9]+)*")


def fold(word):
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        word = word[:-1]
    return word


def words(text):
    return [fold(w) for w in WORD.findall(text.lower())]


def content_words(text):
    seen, out = set(), []
    for w in words(text):
        if w not in FUNCTION_WORDS and w not in seen:
            seen.add(w)
            out.append(w)
    return out


def verdict(score, reason):
    return {"score": score, "passed": score >= PASS_AT, "reason": reason}


def judge(payload):
    output = payload["output"]
    claims = content_words(output)
    if not claims or ABSTENTION.match(output):
        what = "an abstention" if claims else "no content words"
        return verdict(1.0, f"nothing to check ({what}): vacuously grounded")
    chunks = payload.get("context") or []
    known = set()
    for chunk in chunks:
        known.update(words(chunk if isinstance(chunk, str) else json.dumps(chunk)))
    if not known:
        return verdict(
            0.0,
            f"no retrieved context: none of the {len(claims)} content words "
            "of the answer can be grounded",
        )
    missing = [w for w in claims if w not in known]
    found = len(claims) - len(missing)
    score = found / len(claims)
    reason = f"{found}/{len(claims)} content words found in the context"
    if missing:
        shown = ", ".join(missing[:5]) + (", ..." if len(missing) > 5 else "")
        reason += f"; unsupported: {shown}"
    return verdict(score, reason)


def main():
    raw = sys.stdin.buffer.read()  # all of stdin, before anything else
    try:
        payload = json.loads(raw.decode("utf-8"))
    except ValueError as error:
        print(f"grounded: the payload is not JSON: {error}", file=sys.stderr)
        return 2
    if not isinstance(payload, dict) or not isinstance(payload.get("output"), str):
        print('grounded: the payload has no string "output"', file=sys.stderr)
        return 2
    print(json.dumps(judge(payload)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

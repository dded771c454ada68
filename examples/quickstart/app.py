#!/usr/bin/env python3
"""The system under test: a tiny, deterministic support bot for Pebble & Pine.

It stands in for an LLM + RAG pipeline so the example runs offline, with no
API key and nothing but the Python standard library. evalpipe sends one case
as JSON on stdin:

    {"context": ["chunk", ...], "input": "question", "metadata": {...}}

and the bot prints its answer on stdout. How it answers:

1. Split the retrieved chunks into sentences and pick the sentence sharing the
   most content words with the question (the first one on a tie).
2. Guess the kind of question (yes/no, contact, duration, price, time) and pull
   a short answer out of that sentence; otherwise answer with the sentence.

It is wrong by construction, in ways a real bot is wrong too:

- word overlap ranks an off-topic sentence first when it repeats the
  question's words (a retrieval/ranking error);
- yes/no answers only look for negation words, so "free" reads as "yes";
- when a price or time is asked for and the best sentence has none, it falls
  back to STALE_MEMORY, an outdated "parametric" answer (a hallucination that
  the `grounded` scorer catches);
- order look-ups call a backend that is not configured: the bot exits non-zero,
  and evalpipe records a `target error` for that case instead of crashing.
"""

import json
import re
import sys

STOPWORDS = frozenset(
    """a about after all am an and any are as at be been before being but by can
    could did do does doing for from get had has have how i if in into is it its
    me my of on once or our out over so than that the their them then there these
    they this to too under up us was we were what when where which while who why
    will with would you your yours""".split()
)

# Answers the bot "remembers" from an old policy page. Wrong today, and not in
# any context: used when the retrieved text does not contain what was asked.
STALE_MEMORY = {"money": "$14.99", "time": "9am to 5pm"}

NUMBER = (
    r"(?:\d+(?:\s*(?:-|–|to)\s*\d+)?|one|two|three|four|five|six|seven|eight|"
    r"nine|ten|eleven|twelve|fourteen|fifteen|twenty|thirty|sixty|ninety)"
)
DURATION = re.compile(
    NUMBER
    + r"[ -](?:business |calendar |working )?(?:minute|hour|day|week|month|year)s?\b",
    re.IGNORECASE,
)
CLOCK = r"\d{1,2}(?::\d{2})?\s?(?:am|pm)"
TIME_RANGE = re.compile(rf"\b{CLOCK}\s*(?:-|–|to)\s*{CLOCK}", re.IGNORECASE)
MONEY = re.compile(r"\$\d+(?:\.\d{2})?")
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
PHONE = re.compile(r"\b\d(?:-\d{3}){2}-\d{4}\b")
NEGATION = re.compile(r"\b(?:not|no|never|cannot|can't|don't|doesn't|won't)\b", re.I)
ORDER_LOOKUP = re.compile(r"\border\s*(?:#|number\s*|no\.?\s*)\d+", re.IGNORECASE)


def stem(word):
    """Crude plural folding, enough to match "returns" with "return"."""
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def content_words(text):
    return {stem(w) for w in re.findall(r"[a-z0-9]+", text.lower())} - STOPWORDS


def sentences(chunks):
    for chunk in chunks:
        for sentence in re.split(r"(?<=[.!?])\s+", str(chunk).strip()):
            if sentence:
                yield sentence


def best_sentence(question, chunks):
    wanted = content_words(question)
    best, best_overlap = None, 0
    for sentence in sentences(chunks):
        overlap = len(wanted & content_words(sentence))
        if overlap > best_overlap:
            best, best_overlap = sentence, overlap
    return best


def kind_of(question):
    q = question.lower()
    first = q.split()[0] if q.split() else ""
    if first in {"do", "does", "can", "is", "are", "will", "could", "may"}:
        return "yes_no"
    if re.search(r"\bemail\b", q):
        return "email"
    if re.search(r"\b(?:phone|call)\b", q):
        return "phone"
    if re.search(r"\bhow long\b|\bhow many (?:minutes|hours|days|weeks|months|years)\b", q):
        return "duration"
    if re.search(r"\bhow much\b|\bcost\b|\bprice\b|\bfee\b|\bcharge\b", q):
        return "money"
    if re.search(r"\bwhat time\b|\bwhen\b|\bhours\b|\bopen\b|\bclose\b", q):
        return "time"
    return "sentence"


def answer(question, chunks):
    sentence = best_sentence(question, chunks)
    if sentence is None:
        return "I don't know."
    kind = kind_of(question)
    if kind == "yes_no":
        return "No" if NEGATION.search(sentence) else "Yes"
    pattern = {
        "email": EMAIL,
        "phone": PHONE,
        "duration": DURATION,
        "money": MONEY,
        "time": TIME_RANGE,
    }.get(kind)
    if pattern is not None:
        found = pattern.search(sentence)
        if found:
            return found.group(0)
        if kind in STALE_MEMORY:
            return STALE_MEMORY[kind]
    return sentence


def main():
    case = json.loads(sys.stdin.read())
    question = str(case["input"])
    if ORDER_LOOKUP.search(question):
        # A tool call the demo bot cannot make: a failure evalpipe turns into
        # `target error: ...` Scores for this case, while the run goes on.
        print("order lookup failed: ORDERS_API_URL is not set", file=sys.stderr)
        return 3
    print(answer(question, case.get("context") or []))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""The system under test: a keyword router for support tickets.

It stands in for a classifier (a fine-tuned model, an LLM asked for a label)
so the example runs offline with nothing but the Python standard library.
evalpipe sends one case as JSON on stdin, {"input": "ticket text", ...}, and
the router prints {"label": ..., "matched": ...} on stdout.

It checks the keyword lists in order (billing, then technical, then account)
and takes the first that matches, so it is wrong in ways a real router is:
"sign in" reads as an account problem even after an update broke it, and
"payment" or "invoice" win over the account words beside them. A ticket with
no keyword gets {"label": null}: an invalid prediction, which evalpipe counts
apart from every label rather than taking it for one.
"""

import json
import sys

KEYWORDS = [
    ("billing", ["refund", "charge", "invoice", "price", "bill", "payment"]),
    ("technical", ["error", "crash", "bug", "slow", "broken", "load"]),
    ("account", ["password", "login", "email", "account", "sign in", "username"]),
]


def route(text):
    lowered = text.lower()
    for label, words in KEYWORDS:
        for word in words:
            if word in lowered:
                return {"label": label, "matched": word}
    return {"label": None, "matched": None}


if __name__ == "__main__":
    case = json.load(sys.stdin)
    print(json.dumps(route(str(case["input"]))))

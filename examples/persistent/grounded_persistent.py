#!/usr/bin/env python3
"""grounded, as a persistent scorer: `python3 grounded_persistent.py`.

The same metric as ../quickstart/scorers/grounded.py (its `judge` is imported,
not copied), served by evalpipe_persistent: one process for the whole run.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "quickstart", "scorers"))

from evalpipe_persistent import serve  # noqa: E402
from grounded import judge  # noqa: E402


def score_case(payload):
    if not isinstance(payload.get("output"), str):
        raise ValueError('the payload has no string "output"')
    return judge(payload)


if __name__ == "__main__":
    serve(score_case)

#!/usr/bin/env python3
"""Two versions of one tiny system, for comparing them (README "Compare and
gate"): it names a country's capital from a table. Version 2 learnt two
capitals version 1 lacked and lost one it had. evalpipe sends one case as
JSON on stdin ({"input": "...", ...}); the answer goes to stdout.
"""

import json
import sys

V1 = {"France": "Paris", "Japan": "Tokyo", "Kenya": "Nairobi", "Peru": "Lima"}
V2 = {"France": "Paris", "Japan": "Tokyo", "Peru": "Lima",
      "Chile": "Santiago", "Ghana": "Accra"}

version = sys.argv[sys.argv.index("--version") + 1]
table = V2 if version == "2" else V1
question = json.load(sys.stdin)["input"]
country = question.rsplit(" ", 1)[-1].rstrip("?")
print(table.get(country, "I do not know"))

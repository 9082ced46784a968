"""Which operations of the API description had a success answer checked against it during the
test suite (tests/src/openapi_check.rs writes `METHOD template status` per answer).

    python3 scripts/openapi_coverage.py <openapi.json> <checked lines file>

Prints the totals and the operations whose success answers no test checked; exits 1 when there
are any, so that every operation keeps at least one real answer validated by the suite."""

import json
import sys

doc = json.load(open(sys.argv[1]))
checked = {}
for line in open(sys.argv[2]):
    parts = line.split()
    if len(parts) == 3:
        checked.setdefault((parts[0], parts[1]), set()).add(parts[2])
operations = [
    (method.upper(), path)
    for path, item in doc["paths"].items()
    for method in item
    if method in ("get", "post", "put", "patch", "delete")
]
answers = sum(1 for _ in open(sys.argv[2]))
missing = [op for op in operations if not any(s.startswith("2") or s == "304" for s in checked.get(op, ()))]
print(f"answers checked against the API description: {answers}; operations with a success answer "
      f"checked: {len(operations) - len(missing)} of {len(operations)}")
for method, path in sorted(missing, key=lambda op: (op[1], op[0])):
    print(f"  no success answer checked: {method} {path}")
sys.exit(1 if missing else 0)

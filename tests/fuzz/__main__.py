"""``python -m tests.fuzz <target> [libFuzzer flags] [corpus dirs]``: one target under atheris."""
from __future__ import annotations

import sys

from tests.fuzz.harness import TARGETS, fuzz

if len(sys.argv) < 2 or sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    print("targets:")
    for name, what in TARGETS.items():
        print(f"  {name:18} {what}")
    sys.exit(0 if len(sys.argv) >= 2 else 2)
fuzz(sys.argv[1], sys.argv[2:])

"""``python -m tests.fuzz.make_seeds [target ...]``: (re)write the seed corpora from the
targets' ``seeds()``. Files are named by content, so rewriting is idempotent; the inputs of
past findings copied in by hand (``regress-*``) are left as they are."""
from __future__ import annotations

import hashlib
import sys

from tests.fuzz.harness import TARGETS, corpus_of, target_module


def write_seeds(name: str) -> int:
    directory = corpus_of(name)
    directory.mkdir(parents=True, exist_ok=True)
    count = 0
    for label, data in target_module(name).seeds():
        digest = hashlib.sha1(data).hexdigest()[:12]
        (directory / f"{label}-{digest}").write_bytes(data)
        count += 1
    return count


def main(argv: list[str]) -> None:
    for name in argv or list(TARGETS):
        print(f"{name}: {write_seeds(name)} seeds")


if __name__ == "__main__":
    main(sys.argv[1:])

"""What the broker process leaves unimported: libraries that only a test run uses but that a
dependency imports whenever it finds them installed. A kafka-py module with no twin in Kafka
(the JVM loads a class only when it is first used, so Kafka's start has no such cost).

kio, the protocol codec, imports Hypothesis on its first import when Hypothesis is
installed (it is, with the test extras), to register a strategy for each of its value types
for property tests. The broker never draws test data; importing Hypothesis and registering
those strategies cost about 0.15 s of every start on a 2-core VM (docs/kraft.md, "What the
start does"). ``leave_out_test_libraries`` marks Hypothesis as not importable in this
process before anything imports kio, which kio takes as Hypothesis not being installed.

Only the broker's entry point (kafka_py/core/kafka.py) calls it: a test process that imports the
broker's modules keeps Hypothesis.
"""
from __future__ import annotations

import sys
from typing import MutableMapping, Optional

# Imported by a dependency at its own import, used by tests only.
TEST_ONLY_LIBRARIES = ("hypothesis",)


def leave_out_test_libraries(modules: Optional[MutableMapping[str, object]] = None) -> list[str]:
    """Mark each of TEST_ONLY_LIBRARIES not yet imported as not importable (None in
    ``sys.modules``: ``import`` raises ImportError for it); the names marked."""
    if modules is None:
        modules = sys.modules
    marked = []
    for name in TEST_ONLY_LIBRARIES:
        if name not in modules:
            modules[name] = None
            marked.append(name)
    return marked

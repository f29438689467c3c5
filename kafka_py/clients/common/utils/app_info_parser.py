"""Port of clients/src/main/java/org/apache/kafka/common/utils/AppInfoParser.java (Kafka
2.8.2): the version and commit a server reports (the app-info metrics, the metadata shell's
``/local``). The version is the Kafka release whose protocol this broker speaks; the commit
is this kafka-py tree's, read from its ``.git`` without running git.
"""
from __future__ import annotations

import os

KAFKA_VERSION = "2.8.2"
_TREE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def get_version() -> str:
    return KAFKA_VERSION


def get_commit_id() -> str:
    """The first 16 hex digits of the tree's HEAD commit, or "unknown" (an installed package)."""
    git = os.path.join(_TREE, ".git")
    try:
        with open(os.path.join(git, "HEAD")) as f:
            head = f.read().strip()
        if not head.startswith("ref: "):
            return head[:16]
        ref = head[5:]
        try:
            with open(os.path.join(git, ref)) as f:
                return f.read().strip()[:16]
        except OSError:
            with open(os.path.join(git, "packed-refs")) as f:
                for line in f:
                    if line.rstrip().endswith(" " + ref):
                        return line.split()[0][:16]
    except OSError:
        pass
    return "unknown"

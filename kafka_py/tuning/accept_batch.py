"""How many connections an Acceptor takes from its listen queue each time select reports it
ready: a kafka-py addition with no counterpart in Kafka's source, whose Acceptor accepts one
connection per ready key and selects again.

Each pass of the Acceptor's loop is a select system call, which drops the interpreter lock
and waits to take it back from the network and handler threads. A burst of connections (a
client's connection pool, every client reconnecting after a broker restart) is taken in one
pass instead: ``Acceptor.accept_new_connections`` accepts up to ``ACCEPT_BATCH`` connections
per ready key, and stops early when the listen queue is empty (accept raises
BlockingIOError). Nothing a client sees changes: each connection is counted, quota-checked
and handed to a Processor exactly as one accepted alone.
"""
from __future__ import annotations

ACCEPT_BATCH = 64

_ACCEPTS = range(ACCEPT_BATCH)


def accepts_per_ready_key() -> range:
    """What ``Acceptor.accept_new_connections`` iterates over for each ready server socket."""
    return _ACCEPTS


__all__ = ["ACCEPT_BATCH", "accepts_per_ready_key"]

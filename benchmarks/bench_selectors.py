"""One network-thread poll cycle with the standard `selectors` against `selectors2`.

A Processor (network/socket_server.py) registers every connection it owns in one
selector and polls it in a loop. This measures that loop: 200 registered
socketpairs, one of them readable, `select(timeout=0)` repeated. It backs the
choice recorded in docs/dependencies.md.

    .venv/bin/python benchmarks/bench_selectors.py   # selectors2 optional: pip install selectors2
"""
from __future__ import annotations

import selectors
import socket
import time

CONNECTIONS = 200
ROUNDS = 50_000


def cycle(module, label: str) -> None:
    sel = module.DefaultSelector()
    pairs = [socket.socketpair() for _ in range(CONNECTIONS)]
    for a, _ in pairs:
        a.setblocking(False)
        sel.register(a, module.EVENT_READ)
    pairs[0][1].send(b"x")  # one readable connection, as in a busy broker with idle clients
    start = time.perf_counter()
    for _ in range(ROUNDS):
        ready = sel.select(timeout=0)
        assert len(ready) == 1
    elapsed = time.perf_counter() - start
    print(f"{label:<24} {type(sel).__name__:<16} {elapsed / ROUNDS * 1e6:8.2f} us per select()")
    sel.close()
    for a, b in pairs:
        a.close()
        b.close()


def main() -> None:
    cycle(selectors, "selectors (stdlib)")
    try:
        import selectors2
    except ImportError as exc:
        # selectors2 2.0.2 (its last release) imports collections.Mapping, gone since 3.10.
        print(f"selectors2 cannot be used here: {exc}")
    else:
        cycle(selectors2, "selectors2")


if __name__ == "__main__":
    main()

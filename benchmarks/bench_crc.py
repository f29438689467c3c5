"""CRC-32C throughput of the candidate libraries over a 1 MiB buffer.

The produce path checks the CRC-32C of every batch (DefaultRecordBatch.ensure_valid),
so this is the number behind the choice of `crc32c` over `crcmod` in
docs/dependencies.md.

    .venv/bin/python benchmarks/bench_crc.py
"""
from __future__ import annotations

import os
import time

import crc32c

SIZE = 1 << 20


def measure(name: str, fn, data: bytes, min_seconds: float = 1.0) -> float:
    fn(data)  # warm up
    rounds, start = 0, time.perf_counter()
    while True:
        fn(data)
        rounds += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_seconds:
            break
    rate = rounds * len(data) / elapsed / 1e6
    print(f"{name:<28} {rate:>12,.0f} MB/s")
    return rate


def main() -> None:
    data = os.urandom(SIZE)
    results = {"crc32c (hardware)": measure("crc32c (hardware)", crc32c.crc32c, data)}
    try:
        import crcmod.predefined

        fn = crcmod.predefined.mkPredefinedCrcFun("crc-32c")
        expected = crc32c.crc32c(data)
        assert fn(data) == expected, "crcmod and crc32c disagree"
        results["crcmod"] = measure("crcmod", fn, data)
    except ImportError:
        print("crcmod not installed (pip install crcmod) - skipped")
    print(f"hardware acceleration: {crc32c.hardware_based}")


if __name__ == "__main__":
    main()

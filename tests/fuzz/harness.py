"""What the fuzz targets share: the list of targets, their seed corpora, and running one.

A target is a module ``tests/fuzz/fuzz_<name>.py`` with

* ``one_input(data: bytes) -> None``: feed ``data`` to the parser and check its contract. A
  parser may succeed or raise the exception its caller expects (the target catches exactly
  those); any other exception escapes, and atheris reports it with the input that caused it;
* ``seeds() -> Iterable[tuple[str, bytes]]``: valid inputs built as the other tests build
  them, written to ``corpus/<name>/`` by ``python -m tests.fuzz.make_seeds``; the input of a
  past finding is kept beside them as ``regress-<what>``.

``python -m tests.fuzz <name> [libFuzzer flags]`` runs one target under atheris with the
broker's modules instrumented for coverage; tests/fuzz/test_fuzz.py runs every target for
a bounded number of inputs.
"""
from __future__ import annotations

import importlib
import os
import pathlib
import sys
from types import ModuleType
from typing import Iterator

FUZZ_DIR = pathlib.Path(__file__).resolve().parent
CORPUS_DIR = FUZZ_DIR / "corpus"

# name -> what it parses (the module is tests.fuzz.fuzz_<name>)
TARGETS: dict[str, str] = {
    "request": "request header and body of every served API and version (kafka_py.clients.common.protocol.messages)",
    "produce_records": "a produced record batch through LogValidator (log/log_validator.py, kafka_py/clients/common/record)",
    "sasl": "SASL/PLAIN and SCRAM-SHA-256/512 client tokens on the server side (kafka_py/clients/common/security)",
    "frames": "the size-prefixed frame reader of network/selector.py, over any split into reads",
    "tls_frames": "frames over a real in-memory TLS session (network/ssl_transport_layer.py): tampered records, "
                  "hostile handshakes",
    "segment": "a .log segment's batches through FileRecords and LogSegment.recover",
    "log_recovery": "Log's recovery of a directory whose only segment is the input",
    "indexes": "offset, time and transaction index files: open, sanity check, lookups",
    "checkpoints": "the checkpoint files of server/checkpoints and meta.properties",
    "producer_snapshot": "producer state snapshots (log/producer_state_manager.py)",
    "offsets_records": "__consumer_offsets record keys and values (group_metadata_manager.py)",
    "txn_records": "__transaction_state record keys and values (transaction_log.py)",
    "zk_data": "every znode decoder of kafka_py/core/zk/zk_data.py",
    "acls": "AclAuthorizer's decisions over any ACLs and resource names, against Kafka's rules by brute force",
}


# Third-party packages that parse for a target, instrumented with the broker's modules.
EXTRA_INSTRUMENTED: dict[str, tuple[str, ...]] = {
    "request": ("kio",),
}


def target_module(name: str) -> ModuleType:
    if name not in TARGETS:
        raise SystemExit(f"unknown fuzz target {name!r}; targets: {', '.join(TARGETS)}")
    return importlib.import_module(f"tests.fuzz.fuzz_{name}")


def corpus_of(name: str) -> pathlib.Path:
    return CORPUS_DIR / name


def corpus_inputs(name: str) -> Iterator[tuple[str, bytes]]:
    directory = corpus_of(name)
    for path in sorted(directory.iterdir()) if directory.is_dir() else ():
        yield path.name, path.read_bytes()


def fuzz(name: str, argv: list[str]) -> None:
    """Run target ``name`` under atheris (does not return: libFuzzer exits when done)."""
    import logging

    import atheris

    # The parsers log what they refuse (a warning per truncated segment, say): at a thousand
    # inputs a second that is noise around the one report that matters.
    logging.disable(logging.CRITICAL)
    # Instrument the broker's modules as the target imports them: coverage of the parsers is
    # what guides the mutations.
    with atheris.instrument_imports(include=["kafka_py", *EXTRA_INSTRUMENTED.get(name, ())]):
        module = target_module(name)
    atheris.Setup([sys.argv[0], *argv], module.one_input)
    atheris.Fuzz()


def scratch_dir(prefix: str) -> str:
    """A temporary directory for a target's files, removed at exit; in memory (/dev/shm) where
    there is one, since the log fsyncs and a disk's fsync would set the pace of the run."""
    import atexit
    import shutil
    import tempfile

    memory = "/dev/shm"
    root = tempfile.mkdtemp(prefix=f"kafka-py-fuzz-{prefix}-",
                            dir=memory if os.path.isdir(memory) and os.access(memory, os.W_OK) else None)
    atexit.register(shutil.rmtree, root, True)
    return root

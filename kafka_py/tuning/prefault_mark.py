"""The prefault mark of a FileRecords: where its appends ask the page cache prefaulter
(kafka_py/tuning/page_cache_prefaulter.py) for the next fill. A kafka-py addition with no
counterpart in Kafka's source.

A FileRecords holds one ``prefault_mark``, ``NO_PREFAULT_MARK`` until the prefaulter sets
one with ``set_prefault_mark``, and ``FileRecords.append`` makes one call,
``prefault_mark.appended(records, size)``, after each append. A mark never changes once
made: moving it puts a new one in place, so an append sees a size and its listener
together, whichever thread moved the mark meanwhile.

This module imports nothing of the record package, which imports it.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

# No append reaches it (segments stay under 2 GiB).
_NEVER = 2**63


class PrefaultMark:
    """Have the appends that take a FileRecords' size to ``size`` or past it call ``listener``
    with the FileRecords."""

    __slots__ = ("size", "listener")

    def __init__(self, size: int, listener: Callable[[Any], None]) -> None:
        self.size = size
        self.listener = listener

    def appended(self, records: Any, size: int) -> None:
        """FileRecords.append's hook: ``records`` now holds ``size`` bytes."""
        if size >= self.size:
            self.listener(records)

    def __repr__(self) -> str:
        return f"PrefaultMark(size={self.size}, listener={self.listener!r})"


def _no_listener(records: Any) -> None:
    """The listener of ``NO_PREFAULT_MARK``, which no append reaches."""


# The mark of every FileRecords the prefaulter does not serve (slices included): shared,
# so making a FileRecords allocates nothing for it.
NO_PREFAULT_MARK = PrefaultMark(_NEVER, _no_listener)


def set_prefault_mark(records: Any, size: Optional[int], listener: Optional[Callable[[Any], None]]) -> None:
    """Have the first append that takes ``records``' size to ``size`` or past it call
    ``listener`` (again on every append until the mark moves); None for either stops the calls."""
    records.prefault_mark = (NO_PREFAULT_MARK if size is None or listener is None
                             else PrefaultMark(size, listener))


__all__ = ["NO_PREFAULT_MARK", "PrefaultMark", "set_prefault_mark"]

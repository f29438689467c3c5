"""Port of metadata/src/main/java/org/apache/kafka/controller/Replicas.java (Kafka 2.8.2).

Helpers over replica lists. Kafka keeps them as int arrays; here they are tuples of ints.
"""
from __future__ import annotations

from typing import Iterable, Sequence

NONE: tuple[int, ...] = ()


def to_list(replicas: Iterable[int] | None) -> list[int]:
    return [] if replicas is None else [int(r) for r in replicas]


def to_array(replicas: Iterable[int] | None) -> tuple[int, ...]:
    return NONE if replicas is None else tuple(int(r) for r in replicas)


def validate(replicas: Sequence[int]) -> bool:
    """A replica list is valid if it is non-empty, non-negative and has no duplicates."""
    if not replicas:
        return False
    return all(r >= 0 for r in replicas) and len(set(replicas)) == len(replicas)


def validate_isr(replicas: Sequence[int], isr: Sequence[int]) -> bool:
    """An ISR is valid if it is a valid list (or empty) whose members are all replicas."""
    if not isr:
        return True
    if not validate(isr):
        return False
    members = set(replicas)
    return all(r in members for r in isr)


def contains(replicas: Sequence[int], value: int | Sequence[int]) -> bool:
    """Whether ``replicas`` holds ``value`` (an id) or every id of ``value`` (a list)."""
    if isinstance(value, int):
        return value in replicas
    members = set(replicas)
    return all(r in members for r in value)


def copy_without(replicas: Sequence[int], value: int) -> tuple[int, ...]:
    return tuple(r for r in replicas if r != value)


def copy_with(replicas: Sequence[int], value: int) -> tuple[int, ...]:
    return tuple(replicas) + (value,)


def to_set(replicas: Iterable[int]) -> set[int]:
    return set(replicas)

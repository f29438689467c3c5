"""KAFKA_PY_CPU_AFFINITY: parsing and the choice of CPUs (pure functions)."""
from __future__ import annotations

import pytest

from kafka_py.tuning.cpu_affinity import CpuAffinityError, choose_cpus, parse_cpu_list, spare_cpus


@pytest.mark.parametrize("text, cpus", [
    ("0", {0}), ("3", {3}), ("0,2", {0, 2}), ("0-3", {0, 1, 2, 3}), ("1,4-5, 7", {1, 4, 5, 7}), ("2-2", {2}),
])
def test_parse_cpu_list(text, cpus):
    assert parse_cpu_list(text) == frozenset(cpus)


@pytest.mark.parametrize("text", ["", "a", "1,", "-1", "3-1", "1-x", "1.5", "0,,1"])
def test_parse_cpu_list_rejects(text):
    with pytest.raises(CpuAffinityError):
        parse_cpu_list(text)


def test_auto_picks_one_allowed_cpu_by_pid():
    allowed = frozenset({0, 2, 5})
    chosen = {pid: choose_cpus("auto", allowed, pid) for pid in range(6)}
    assert all(len(cpus) == 1 and cpus <= allowed for cpus in chosen.values())
    # consecutive process ids land on different CPUs
    assert {next(iter(c)) for c in chosen.values()} == allowed
    assert choose_cpus("AUTO", allowed, 4) == choose_cpus("auto", allowed, 4)


@pytest.mark.parametrize("value", [None, "", "  "])
def test_unset_leaves_the_affinity_alone(value):
    # pinning is a tuning the user turns on (docs/operations.md)
    assert choose_cpus(value, frozenset({0, 1, 2, 3}), 5) is None


def test_auto_on_one_cpu_and_none_change_nothing():
    assert choose_cpus("auto", frozenset({1}), 123) is None
    assert choose_cpus("none", frozenset({0, 1}), 123) is None
    assert choose_cpus(" None ", frozenset({0, 1}), 123) is None


def test_explicit_list_must_be_allowed():
    assert choose_cpus("1", frozenset({0, 1}), 7) == frozenset({1})
    assert choose_cpus("0-1", frozenset({0, 1}), 7) is None  # already so
    with pytest.raises(CpuAffinityError, match="not available"):
        choose_cpus("4", frozenset({0, 1}), 7)
    with pytest.raises(CpuAffinityError):
        choose_cpus("first", frozenset({0, 1}), 7)


def test_spare_cpus_are_the_allowed_ones_the_broker_is_not_pinned_to():
    allowed = frozenset({0, 1, 2, 3})
    assert spare_cpus(allowed, frozenset({1})) == frozenset({0, 2, 3})
    # an operator's taskset narrowed what is allowed: nothing outside it is spare
    assert spare_cpus(frozenset({2, 3}), frozenset({3})) == frozenset({2})
    # not pinned, or pinned to everything allowed: nothing to move to
    assert spare_cpus(allowed, None) is None
    assert spare_cpus(frozenset({5}), frozenset({5})) is None

"""maxOffsetsPerTrigger's share-out and minOffsetsPerTrigger's hold-back, alone."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kafka_py.spark.admission_control import TriggerDelay, rate_limit


def test_a_budget_is_shared_in_proportion_to_what_waits():
    assert rate_limit(100, {"a": 0, "b": 0}, {"a": 300, "b": 100}) == {"a": 75, "b": 25}
    # Everything fits: the ends as they are.
    assert rate_limit(1000, {"a": 5, "b": 0}, {"a": 300, "b": 100}) == {"a": 300, "b": 100}
    # A partition with nothing waiting keeps its end.
    assert rate_limit(10, {"a": 50, "b": 0}, {"a": 50, "b": 100}) == {"a": 50, "b": 10}


@given(st.integers(1, 5000), st.dictionaries(st.integers(0, 40), st.tuples(st.integers(0, 10**6), st.integers(0, 10**5)),
                                             min_size=1))
def test_the_total_never_exceeds_the_budget_and_nothing_goes_backwards_or_past_its_end(budget, partitions):
    begins = {k: b for k, (b, _) in partitions.items()}
    ends = {k: b + n for k, (b, n) in partitions.items()}
    limited = rate_limit(budget, begins, ends)
    assert set(limited) == set(ends)
    assert all(begins[k] <= limited[k] <= ends[k] for k in ends)
    taken = sum(limited[k] - begins[k] for k in ends)
    assert taken == min(budget, sum(ends[k] - begins[k] for k in ends))


def test_more_partitions_than_the_budget_all_get_their_turn():
    begins = {p: 0 for p in range(10)}
    ends = {p: 5 for p in range(10)}
    read = set()
    for _ in range(10):
        limited = rate_limit(3, begins, ends)
        read |= {p for p in ends if limited[p] > begins[p]}
        begins = limited
    assert read == set(range(10))


def test_a_micro_batch_waits_for_enough_offsets_or_for_the_delay():
    delay = TriggerDelay(min_offsets=100, max_delay_ms=1000)
    assert delay.hold_back({"a": 0}, {"a": 50}, now_ms=0)
    assert delay.hold_back({"a": 0}, {"a": 99}, now_ms=500)
    assert not delay.hold_back({"a": 0}, {"a": 100}, now_ms=600)
    # The clock restarted at 600: 50 offsets wait until 1600.
    assert delay.hold_back({"a": 100}, {"a": 150}, now_ms=1500)
    assert not delay.hold_back({"a": 100}, {"a": 150}, now_ms=1600)

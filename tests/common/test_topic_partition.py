"""TopicPartition keeps its hash, as Kafka's does, without letting it into the value: equal
partitions are equal and hash alike however they were made (constructor, parse, replace, a
pickle from another process), and the hash is what the (topic, partition) pair hashes to."""
from __future__ import annotations

import copy
import dataclasses
import os
import pickle
import subprocess
import sys

import pytest

from kafka_py.clients.common.topic_partition import TopicPartition


def test_equality_order_and_repr_are_the_pair_s() -> None:
    a, b = TopicPartition("t", 1), TopicPartition("t", 1)
    assert a == b and a is not b
    assert hash(a) == hash(b) == hash(("t", 1))
    assert TopicPartition("t", 1) != TopicPartition("t", 2)
    assert TopicPartition("t", 1) != TopicPartition("u", 1)
    assert sorted([TopicPartition("b", 0), TopicPartition("a", 3), TopicPartition("a", 1)]) == [
        TopicPartition("a", 1), TopicPartition("a", 3), TopicPartition("b", 0)]
    assert repr(a) == "TopicPartition(topic='t', partition=1)"
    assert str(a) == "t-1"
    assert {a: "x"}[b] == "x"


def test_it_stays_frozen() -> None:
    tp = TopicPartition("t", 1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        tp.partition = 2  # type: ignore[misc]


def test_replace_and_parse_hash_their_own_value() -> None:
    moved = dataclasses.replace(TopicPartition("t", 1), partition=7)
    assert moved == TopicPartition("t", 7)
    assert hash(moved) == hash(("t", 7))
    parsed = TopicPartition.parse("my-topic-3")
    assert parsed == TopicPartition("my-topic", 3) and hash(parsed) == hash(("my-topic", 3))


def test_copies_are_equal_and_hash_alike() -> None:
    tp = TopicPartition("t", 1)
    for other in (copy.copy(tp), copy.deepcopy(tp), pickle.loads(pickle.dumps(tp))):
        assert other == tp and hash(other) == hash(tp)


def test_a_pickle_from_another_process_hashes_as_this_one_s() -> None:
    # str hashes differ between processes: a hash carried in the pickle would miss in dicts here
    script = ("import pickle, sys; from kafka_py.clients.common.topic_partition import TopicPartition; "
              "sys.stdout.buffer.write(pickle.dumps(TopicPartition('a-topic', 5)))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    data = subprocess.run([sys.executable, "-c", script], env=env, check=True, capture_output=True).stdout
    tp = pickle.loads(data)
    assert hash(tp) == hash(("a-topic", 5))
    assert {TopicPartition("a-topic", 5): 1}[tp] == 1

"""server/kafka_apis_common.py: the helpers KafkaApis and its handler modules share."""
from __future__ import annotations

import datetime

from kafka_py.clients.common.topic_partition import TopicPartition
from kafka_py.server.kafka_apis_common import millis, topics_of


def test_millis_of_a_timedelta_or_an_int():
    assert millis(datetime.timedelta(seconds=1.5)) == 1500
    assert millis(datetime.timedelta(microseconds=2600)) == 3
    assert millis(250) == 250


def test_topics_of_groups_by_topic_in_first_seen_order():
    items = [(TopicPartition("b", 1), "x"), (TopicPartition("a", 0), "y"), (TopicPartition("b", 0), "z")]
    assert topics_of(items) == [("b", [(1, "x"), (0, "z")]), ("a", [(0, "y")])]
    assert topics_of([]) == []

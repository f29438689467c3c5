"""BrokerTopicStats: the produce and fetch counts of a topic and of all topics, taken under
the one lock every BrokerTopicMetrics shares, stay exact with handler threads marking at once."""
from __future__ import annotations

import threading
import uuid

from kafka_py.server.broker_topic_stats import BrokerTopicStats


def _counts(s) -> tuple[int, ...]:
    return (s.total_produce_request_rate.count, s.messages_in_rate.count, s.bytes_in_rate.count,
            s.total_fetch_request_rate.count, s.bytes_out_rate.count)


def test_counts_of_topics_and_all_topics_are_exact_across_threads() -> None:
    stats = BrokerTopicStats()
    try:
        per_thread = 5_000
        # The meters are process-wide, one per name as in Kafka's registry: topics of their
        # own, and the all-topics counts taken as changes over the test, keep other brokers
        # that ran in this process out of the figures.
        a_topic, b_topic = (f"{name}-{uuid.uuid4().hex}" for name in ("a", "b"))
        before = _counts(stats.all_topics_stats)

        def work(topic: str) -> None:
            for _ in range(per_thread):
                stats.record_produce(topic, 2, 100)
                stats.mark_fetch_request(topic)
                stats.update_bytes_out(topic, False, 10)

        threads = [threading.Thread(target=work, args=(t,)) for t in (a_topic, b_topic, a_topic, b_topic)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not any(t.is_alive() for t in threads)
        for topic in (a_topic, b_topic):
            s = stats.topic_stats(topic)
            assert s.lock is stats.all_topics_stats.lock
            assert _counts(s) == (2 * per_thread, 4 * per_thread, 200 * per_thread, 2 * per_thread, 20 * per_thread)
        after = _counts(stats.all_topics_stats)
        assert tuple(x - y for x, y in zip(after, before)) == \
            (4 * per_thread, 8 * per_thread, 400 * per_thread, 4 * per_thread, 40 * per_thread)
    finally:
        stats.close()

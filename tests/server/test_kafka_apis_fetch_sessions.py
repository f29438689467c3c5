"""Fetch sessions through KafkaApis (server/fetch_session.py behind handle_fetch_request), on
the in-process stack of test_kafka_apis.py: sessions made by full fetches with epoch 0, a
follower's session privileged, and a consumer under a fetch quota whose throttled answer
leaves its session as it was (so the next answer still tells what the throttled one did not).
"""
from __future__ import annotations

from kafka_py.clients.common.sensor import Quota
from kafka_py.network.request_channel import SendResponse
from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from kafka_py.clients.common.protocol.messages import decode_response
from kafka_py.server.quota_factory import instantiate
from kafka_py.core.zk.zk_data import ConfigEntityName
from tests.network.test_request_channel import send_bytes
from tests.server.test_kafka_apis import T0, T1, WAIT_S, env  # noqa: F401 - the fixture

VERSION = 12


def fetch(env, session_id: int, epoch: int, partitions=(), replica_id: int = -1, forgotten=()):
    """A Fetch v12 answered through KafkaApis; ``partitions`` as (TopicPartition, offset). Answers
    other than the Send (a throttled connection's mute and unmute) are skipped."""
    request = env.request(ApiKeys.FETCH, VERSION, replica_id=replica_id, max_wait=0, min_bytes=1,
                          max_bytes=1 << 20, isolation_level=0, session_id=session_id, session_epoch=epoch,
                          rack_id="", forgotten_topics_data=[
                              {"topic": tp.topic, "partitions": [tp.partition]} for tp in forgotten],
                          topics=[{"topic": tp.topic, "partitions": [{
                              "partition": tp.partition, "current_leader_epoch": -1, "fetch_offset": offset,
                              "last_fetched_epoch": -1, "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}
                              for tp, offset in partitions])
    env.apis.handle(request)
    while True:
        response = env.collector.responses.get(timeout=WAIT_S)
        if isinstance(response, SendResponse) and response.request is request:
            break
    _, body = decode_response(send_bytes(response.response_send)[4:], ApiKeys.FETCH, VERSION)
    return body


def answered(body) -> dict[int, int]:
    """partition -> high watermark of the answer's partitions of topic t."""
    return {int(p.partition_index): int(p.high_watermark) for t in body.responses for p in t.partitions}


def test_sessions_made_through_kafka_apis(env):
    env.broker.lead(T0, T1)
    consumer = fetch(env, 0, 0, [(T0, 0), (T1, 0)])
    assert Errors.for_code(consumer.error_code) is Errors.NONE and answered(consumer) == {0: 0, 1: 0}
    cache = env.apis.fetch_manager.cache
    assert not cache.get(int(consumer.session_id)).privileged
    env.produce(T1, b"a")
    incremental = fetch(env, int(consumer.session_id), 1)
    assert (int(incremental.session_id), answered(incremental)) == (int(consumer.session_id), {1: 1})
    # a follower's session (replica_id 5, which is no replica here: its partitions answer errors)
    follower = fetch(env, 0, 0, [(T0, 0)], replica_id=5)
    assert cache.get(int(follower.session_id)).privileged
    # an epoch -1 fetch makes none
    assert int(fetch(env, 0, -1, [(T0, 0)]).session_id) == 0
    assert cache.size == 2


def test_a_throttled_answer_leaves_the_session_as_it_was(env):
    env.broker.lead(T0)
    env.apis.quotas = quotas = instantiate(env.broker.config)
    try:
        session_id = int(fetch(env, 0, 0, [(T0, 0)]).session_id)
        assert session_id > 0
        env.produce(T0, b"a")
        # a fetch quota of 1 byte/s for every client
        quotas.fetch.update_quota(None, ConfigEntityName.DEFAULT, ConfigEntityName.DEFAULT, Quota.upper_bound(1.0))
        # the consumer has read the record (it fetches from offset 1): the news is the high watermark
        throttled = fetch(env, session_id, 1, [(T0, 1)])
        assert Errors.for_code(throttled.error_code) is Errors.NONE
        assert int(throttled.session_id) == session_id and answered(throttled) == {}
        assert throttled.throttle_time.total_seconds() > 0
        quotas.fetch.update_quota(None, ConfigEntityName.DEFAULT, ConfigEntityName.DEFAULT, None)
        # the session still believes the consumer knows high watermark 0: the next answer says 1
        after = fetch(env, session_id, 2)
        assert Errors.for_code(after.error_code) is Errors.NONE and answered(after) == {0: 1}
        assert answered(fetch(env, session_id, 3)) == {}
    finally:
        quotas.shutdown()

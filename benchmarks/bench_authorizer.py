"""CPU cost of the authorizer on the produce path: one produce request through the broker's code
(bench_request_path.py's loop: decode, KafkaApis.handle, ReplicaManager, Log, the response
written to a socket), by a SASL-style principal, with the AclAuthorizer holding 1,000 ACLs and
without an authorizer, alternated round by round in one run.

A KafkaServer runs in this process with ``authorizer.class.name=kafka.security.authorizer.AclAuthorizer``
(real ZooKeeper, started with ``bin/zookeeper-server-start.sh``). The ACLs are written through the
authorizer itself, as CreateAcls would: 400 literal topic ACLs (50 users), 300 prefixed topic
ACLs, 200 group ACLs, 50 transactional-id ACLs, 48 entries on the topic wildcard ``*`` (Read for
monitoring users: every topic check scans them) and the two that let ``User:bench`` write its
topics. "off" hands KafkaApis no authorizer (what a broker without ``authorizer.class.name`` does);
"on" hands it back.

    .venv/bin/python benchmarks/bench_authorizer.py [--seconds 3] [--rounds 5] [--only produce-1]

Prints the Write check of one produce request alone (``timeit``, min of 5), then CPU
microseconds per request (this thread's CPU time) per round and the medians, and the
authorizer's share: (on - off) / off.
"""
from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_broker import ZooKeeper, free_port, wait_until  # noqa: E402
from bench_request_path import CapturingProcessor, Loop, produce_frame  # noqa: E402

from kafka_py.network.request_channel import Request, RequestContext, SendResponse  # noqa: E402
from kafka_py.clients.common.protocol.messages import decode_request  # noqa: E402

PRINCIPAL = "User:bench"


class PrincipalLoop(Loop):
    """bench_request_path's loop, its requests sent by PRINCIPAL."""

    def one(self, frame: bytes) -> None:
        view = memoryview(bytearray(frame))
        header, body = decode_request(view)
        context = RequestContext(header, "127.0.0.1:1-127.0.0.1:2-0", "127.0.0.1", "CLIENTS", "SASL_PLAINTEXT",
                                 principal=PRINCIPAL)
        request = Request(self.processor.id, context, time.monotonic_ns(), view, body)
        request.request_dequeue_time_ns = time.monotonic_ns()
        self.apis.handle(request)
        response = self.processor.responses.get(timeout=30)
        request.response_dequeue_time_ns = time.monotonic_ns()
        if isinstance(response, SendResponse):
            send = response.response_send
            while not send.completed:
                if send.write_to(self.sender) == 0:
                    time.sleep(0)
        self.metrics.update_request_metrics(request, time.monotonic_ns())


def thousand_acls(topics: list[str]) -> list:
    from kafka_py.core.security.authorizer.acl import (
        AccessControlEntry,
        AclBinding,
        AclOperation as Op,
        AclPermissionType,
        PatternType,
        ResourcePattern,
        ResourceType,
    )

    allow = AclPermissionType.ALLOW

    def binding(resource_type, name, pattern_type, principal, op, host="*"):
        return AclBinding(ResourcePattern(resource_type, name, pattern_type),
                          AccessControlEntry(principal, host, op, allow))

    bindings = []
    for i in range(400):
        bindings.append(binding(ResourceType.TOPIC, f"topic-{i}", PatternType.LITERAL, f"User:user-{i % 50}",
                                (Op.READ, Op.WRITE, Op.DESCRIBE)[i % 3]))
    for i in range(300):
        bindings.append(binding(ResourceType.TOPIC, f"team-{i}-", PatternType.PREFIXED, f"User:team-{i}", Op.WRITE))
    for i in range(200):
        bindings.append(binding(ResourceType.GROUP, f"group-{i}", PatternType.LITERAL, f"User:user-{i % 50}", Op.READ))
    for i in range(50):
        bindings.append(binding(ResourceType.TRANSACTIONAL_ID, f"tx-{i}", PatternType.LITERAL, f"User:user-{i}",
                                Op.WRITE))
    for i in range(50 - len(topics)):
        bindings.append(binding(ResourceType.TOPIC, "*", PatternType.LITERAL, f"User:monitor-{i}", Op.READ,
                                host=f"10.1.0.{i}"))
    for topic in topics:
        bindings.append(binding(ResourceType.TOPIC, topic, PatternType.LITERAL, PRINCIPAL, Op.WRITE))
    assert len(bindings) == 1000
    return bindings


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of each workload, on and off alternated")
    parser.add_argument("--only", default="", help="comma-separated workloads (produce-1, produce-16k)")
    args = parser.parse_args(argv)

    import logging

    logging.basicConfig(level=logging.WARNING)
    from kafka_py.clients.common.topic_partition import TopicPartition
    from kafka_py.core.security.authorizer.acl import ANY_BINDING_FILTER
    from kafka_py.core.security.authorizer.authorizer import ServerContext
    from kafka_py.server.auth_helper import AuthHelper
    from kafka_py.server.kafka_config import KafkaConfig
    from kafka_py.server.kafka_server import KafkaServer
    from kafka_py.core.zk.admin_zk_client import AdminZkClient

    workdir = Path(tempfile.mkdtemp(prefix="bench-authorizer-"))
    zookeeper = ZooKeeper(workdir).start()
    server = None
    try:
        config = KafkaConfig({
            "broker.id": "0", "listeners": f"PLAINTEXT://127.0.0.1:{free_port()}",
            "log.dirs": str(workdir / "logs"), "zookeeper.connect": f"127.0.0.1:{zookeeper.port}/bench",
            "num.network.threads": "1", "num.io.threads": "1", "controlled.shutdown.enable": "false",
            "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
            "allow.everyone.if.no.acl.found": "false", "super.users": "User:ANONYMOUS",
        }, do_log=False)
        server = KafkaServer(config)
        server.startup()
        wait_until(lambda: server.metadata_cache.has_alive_broker(0), 30, "metadata from the controller")
        processor = CapturingProcessor()
        server.socket_server.data_plane_request_channel.add_processor(processor)
        loop = PrincipalLoop(server, processor)
        apis = server.data_plane_request_processor
        authorizer = server.authorizer
        topics = {"produce-1": "bench-p1", "produce-16k": "bench-p16k"}
        admin = AdminZkClient(server.zk_client)
        for topic in topics.values():
            admin.create_topic(topic, 1, 1, {})
        for topic in topics.values():
            wait_until(lambda t=topic: server.replica_manager.online_partition(TopicPartition(t, 0)) is not None,
                       30, f"{topic} leader")
        bindings = thousand_acls(list(topics.values()))
        started = time.perf_counter()
        results = authorizer.create_acls(ServerContext(), bindings)
        assert all(r.exception is None for r in results), [r.exception for r in results if r.exception][:3]
        print(f"{len(authorizer.acls(ANY_BINDING_FILTER))} ACLs written and cached in "
              f"{time.perf_counter() - started:.1f} s", flush=True)

        workloads = {"produce-1": produce_frame(topics["produce-1"], 1, 100, 1),
                     "produce-16k": produce_frame(topics["produce-16k"], 163, 100, 1)}
        # The check alone, as a produce request makes it (one topic), min of 5 x 20,000 calls.
        import timeit

        from kafka_py.core.security.authorizer.acl import AclOperation, ResourceType

        _, body = decode_request(memoryview(bytearray(workloads["produce-1"])))
        context = RequestContext(decode_request(memoryview(bytearray(workloads["produce-1"])))[0], "c",
                                 "127.0.0.1", "CLIENTS", "SASL_PLAINTEXT", principal=PRINCIPAL)
        helper = AuthHelper(authorizer)
        check = timeit.repeat(lambda: helper.filter_by_authorized(
            context, AclOperation.WRITE, ResourceType.TOPIC, body.topic_data, lambda t: t.name), number=20_000, repeat=5)
        print(f"the Write check of one produce request alone: {min(check) / 20_000 * 1e6:.2f} us", flush=True)
        only = set(args.only.split(",")) if args.only else set(workloads)
        helpers = {"on": (authorizer, AuthHelper(authorizer)), "off": (None, AuthHelper(None))}
        for name, frame in workloads.items():
            if name not in only:
                continue
            per_mode: dict[str, list[float]] = {"on": [], "off": []}
            for round_ in range(args.rounds):
                for mode in (("on", "off") if round_ % 2 == 0 else ("off", "on")):
                    apis.authorizer, apis.auth_helper = helpers[mode]
                    count, elapsed = loop.run(frame, args.seconds, False)
                    per_mode[mode].append(loop.cpu / count * 1e6)
                    print(f"{name:<12} acls={mode:<3} {loop.cpu / count * 1e6:8.1f} us CPU/request "
                          f"({count / elapsed:7,.0f} requests/s on one thread)", flush=True)
            on, off = statistics.median(per_mode["on"]), statistics.median(per_mode["off"])
            print(f"{name:<12} median CPU us/request: on {on:.1f} [{min(per_mode['on']):.1f}-"
                  f"{max(per_mode['on']):.1f}], off {off:.1f} [{min(per_mode['off']):.1f}-"
                  f"{max(per_mode['off']):.1f}]; authorizer {100 * (on - off) / off:+.1f} %", flush=True)
        apis.authorizer, apis.auth_helper = helpers["on"]
    finally:
        if server is not None:
            server.shutdown()
        zookeeper.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

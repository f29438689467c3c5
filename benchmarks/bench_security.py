"""TLS and SCRAM costs of a kafka-py broker (docs/performance.md, "TLS and SASL").

Starts a ZooKeeper and one broker with a PLAINTEXT, an SSL and a SASL_PLAINTEXT
(SCRAM-SHA-512) listener, then, alternating the listeners round by round:

* produce: confluent-kafka producer, 10 KB records, acks=1, records/s;
* consume: confluent-kafka consumer reading the produced topic from the start, MB/s;
* the broker's CPU time (user + system, from /proc) per 1,000 records of each produce and
  consume phase: what TLS costs the broker itself, less noisy than the rates on a shared
  machine, where the client's own encryption competes for the same cores;
* SCRAM: new connections per second, each one TCP connect + SaslHandshake +
  two SaslAuthenticate round trips with SCRAM-SHA-512 (4096 iterations), one client
  thread. The client's own PBKDF2 runs once (its salted password is cached), so the
  figure is the broker's cost per login, not the client's.

    .venv/bin/python benchmarks/bench_security.py --rounds 3
"""
from __future__ import annotations

import argparse
import os
import pathlib
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import time
import uuid

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.integration.broker_harness import BrokerProcess, free_port, unique_chroot  # noqa: E402
from tests.security.certs import make_pki  # noqa: E402
from tests.zookeeper_harness import ZooKeeperServer  # noqa: E402

RECORD = b"x" * 10_000


def cpu_seconds(pid: int) -> float:
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def produce(configs: dict, topic: str, count: int) -> float:
    from confluent_kafka import Producer
    producer = Producer({**configs, "acks": "1", "linger.ms": 5, "batch.size": 1_000_000,
                         "queue.buffering.max.kbytes": 1_000_000})
    start = time.perf_counter()
    for _ in range(count):
        while True:
            try:
                producer.produce(topic, RECORD)
                break
            except BufferError:
                producer.poll(0.01)
    producer.flush(120)
    return count / (time.perf_counter() - start)


def consume(configs: dict, topic: str, count: int) -> float:
    from confluent_kafka import Consumer
    consumer = Consumer({**configs, "group.id": "bench-" + uuid.uuid4().hex, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False, "fetch.max.bytes": 52_428_800})
    consumer.subscribe([topic])
    got = 0
    size = 0
    start = None
    deadline = time.monotonic() + 180
    while got < count and time.monotonic() < deadline:
        for message in consumer.consume(1000, 1.0):
            if message.error() is None:
                if start is None:
                    start = time.perf_counter()
                got += 1
                size += len(message.value())
    elapsed = time.perf_counter() - start
    consumer.close()
    return size / elapsed / 1e6


def scram_logins(port: int, user: str, password: str, seconds: float) -> float:
    from kio.schema.sasl_authenticate.v2 import SaslAuthenticateRequest
    from kio.schema.sasl_handshake.v1 import SaslHandshakeRequest

    from kafka_py.clients.common.protocol.api_keys import ApiKeys
    from kafka_py.clients.common.protocol.headers import RequestHeader
    from kafka_py.clients.common.protocol.messages import decode_response, encode_request
    from kafka_py.clients.common.security import scram

    salted_cache: dict = {}

    class CachingFormatter(scram.ScramFormatter):
        def salted_password(self, password, salt, iterations):
            key = (password, salt, iterations)
            if key not in salted_cache:
                salted_cache[key] = super().salted_password(password, salt, iterations)
            return salted_cache[key]

    def exchange(sock, api, version, body):
        sock.sendall(encode_request(RequestHeader(api, version, 1, "bench", api.request_header_version(version)),
                                    body))
        size = struct.unpack(">i", sock.recv(4, socket.MSG_WAITALL))[0]
        return decode_response(sock.recv(size, socket.MSG_WAITALL), api, version)[1]

    count = 0
    end = time.perf_counter() + seconds
    start = time.perf_counter()
    while time.perf_counter() < end:
        client = scram.ScramSaslClient(scram.ScramMechanism.SCRAM_SHA_512, user, password)
        client._formatter = CachingFormatter(scram.ScramMechanism.SCRAM_SHA_512)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            exchange(sock, ApiKeys.SASL_HANDSHAKE, 1, SaslHandshakeRequest(mechanism="SCRAM-SHA-512"))
            first = exchange(sock, ApiKeys.SASL_AUTHENTICATE, 2, SaslAuthenticateRequest(auth_bytes=client.first_message()))
            final = exchange(sock, ApiKeys.SASL_AUTHENTICATE, 2,
                             SaslAuthenticateRequest(auth_bytes=client.final_message(first.auth_bytes)))
            assert int(final.error_code) == 0, final.error_message
            client.verify_server_final(final.auth_bytes)
        count += 1
    return count / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--login-seconds", type=float, default=5.0)
    args = parser.parse_args()
    work = pathlib.Path(tempfile.mkdtemp(prefix="bench-security-"))
    pki = make_pki(work / "pki")
    (work / "zk").mkdir()
    zk = ZooKeeperServer(work / "zk").start()
    ssl_port, sasl_port = free_port(), free_port()
    broker = BrokerProcess(work / "broker", zk.connect_string, unique_chroot("bench-security"))
    broker.overrides.update({
        "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SSL://127.0.0.1:{ssl_port},"
                     f"SASL_PLAINTEXT://127.0.0.1:{sasl_port}",
        "num.network.threads": "1", "num.io.threads": "1",
        "ssl.keystore.type": "PEM", "ssl.keystore.location": str(pki.server_keystore),
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
    })
    broker.write_config()
    try:
        broker.start()
        subprocess.run([str(ROOT / "bin" / "kafka-configs.sh"), "--zookeeper", broker.zk_connect, "--alter",
                        "--add-config", "SCRAM-SHA-512=[iterations=4096,password=bench-secret]",
                        "--entity-type", "users", "--entity-name", "bench"], check=True, capture_output=True)
        plaintext = {"bootstrap.servers": f"127.0.0.1:{broker.port}"}
        tls = {"bootstrap.servers": f"127.0.0.1:{ssl_port}", "security.protocol": "SSL",
               "ssl.ca.location": str(pki.ca_cert)}
        results: dict[str, list[float]] = {k: [] for k in ("produce PLAINTEXT", "produce SSL", "consume PLAINTEXT",
                                                          "consume SSL", "SCRAM logins")}
        cpu: dict[str, list[float]] = {k: [] for k in ("produce PLAINTEXT", "produce SSL", "consume PLAINTEXT",
                                                      "consume SSL")}
        pid = broker.process.pid
        time.sleep(1)
        for r in range(args.rounds):
            for name, configs in (("PLAINTEXT", plaintext), ("SSL", tls)):
                topic = f"bench-{name.lower()}-{r}"
                for what, run in (("produce", produce), ("consume", consume)):
                    before = cpu_seconds(pid)
                    results[f"{what} {name}"].append(run(configs, topic, args.records))
                    # broker CPU ms per 1,000 records
                    cpu[f"{what} {name}"].append((cpu_seconds(pid) - before) * 1e6 / args.records)
            results["SCRAM logins"].append(scram_logins(sasl_port, "bench", "bench-secret", args.login_seconds))
            print(f"round {r + 1}: " + ", ".join(f"{k} {v[-1]:,.1f}" for k, v in results.items())
                  + "; broker CPU ms/1000 records: " + ", ".join(f"{k} {v[-1]:,.0f}" for k, v in cpu.items()),
                  flush=True)
        print()
        for key, values in results.items():
            print(f"{key}: {statistics.median(values):,.1f} [{min(values):,.1f}-{max(values):,.1f}]")
        for key, values in cpu.items():
            print(f"broker CPU ms per 1,000 records, {key}: {statistics.median(values):,.0f} "
                  f"[{min(values):,.0f}-{max(values):,.0f}]")
        for what in ("produce", "consume"):
            ratios = [s / p for s, p in zip(results[f"{what} SSL"], results[f"{what} PLAINTEXT"])]
            print(f"{what} SSL/PLAINTEXT per round: " + ", ".join(f"{x:.2f}" for x in ratios)
                  + f" (median {statistics.median(ratios):.2f})")
            ratios = [s / p for s, p in zip(cpu[f"{what} SSL"], cpu[f"{what} PLAINTEXT"])]
            print(f"{what} broker CPU per record, SSL/PLAINTEXT per round: " + ", ".join(f"{x:.2f}" for x in ratios)
                  + f" (median {statistics.median(ratios):.2f})")
    finally:
        broker.stop()
        zk.stop()


if __name__ == "__main__":
    main()

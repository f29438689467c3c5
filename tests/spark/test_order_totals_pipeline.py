"""The streaming pipeline of docs/spark.md: orders read with readStream, totals per customer over
one-minute event-time windows with a watermark, written to the topic order-totals through the
sink and to Parquet; a kafka-python consumer reads the totals back, and they equal a plain
Python computation over the same orders."""
from __future__ import annotations

import json
import random
import time
from collections import defaultdict

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

from tests.integration.broker_harness import wait_until

WAIT_S = 240
MINUTE_MS = 60_000
START_MS = 1_700_000_040_000 // MINUTE_MS * MINUTE_MS


def start_pipeline(spark, log_dir: str, bootstrap: str, workdir):
    from pyspark.sql import functions as F

    orders = (spark.readStream.format("kafka-log")
              .option("subscribe", "orders")
              .option("kafka.bootstrap.servers", bootstrap)
              .load(log_dir))
    totals = (orders
              .withWatermark("timestamp", "30 seconds")
              .groupBy(F.window("timestamp", "1 minute"), F.col("key"))
              .agg(F.sum(F.col("value").cast("string").cast("long")).alias("total_cents"),
                   F.count(F.lit(1)).alias("orders")))
    to_topic = (totals
                .select(F.col("key"),
                        F.to_json(F.struct(F.col("window.start").alias("window_start"), "total_cents", "orders"))
                        .alias("value"))
                .writeStream.format("kafka-log")
                .option("kafka.bootstrap.servers", bootstrap)
                .option("topic", "order-totals")
                .option("checkpointLocation", str(workdir / "checkpoints" / "to-topic"))
                .outputMode("append")
                .trigger(processingTime="1 second")
                .start())
    to_parquet = (totals
                  .select(F.col("window.start").alias("window_start"), F.col("key").cast("string").alias("customer"),
                          "total_cents", "orders")
                  .writeStream.format("parquet")
                  .option("path", str(workdir / "order-totals"))
                  .option("checkpointLocation", str(workdir / "checkpoints" / "to-parquet"))
                  .outputMode("append")
                  .trigger(processingTime="1 second")
                  .start())
    return to_topic, to_parquet


def test_windowed_totals_reach_the_topic_and_parquet_and_match_plain_python(spark, stream_data, tmp_path):
    bootstrap = stream_data.broker.bootstrap
    stream_data.create_topic("orders", 3)
    stream_data.create_topic("order-totals", 1)
    rng = random.Random(5)
    orders = [(f"customer-{rng.randrange(6)}", rng.randrange(100, 10_000), START_MS + rng.randrange(5 * MINUTE_MS))
              for _ in range(2000)]
    producer = KafkaProducer(bootstrap_servers=bootstrap, acks="all", linger_ms=5)
    for customer, cents, ts in orders:
        producer.send("orders", key=customer.encode(), value=str(cents).encode(), timestamp_ms=ts)
    producer.flush()

    expected = defaultdict(lambda: [0, 0])
    for customer, cents, ts in orders:
        window = ts // MINUTE_MS * MINUTE_MS
        expected[(customer, window)][0] += cents
        expected[(customer, window)][1] += 1
    expected = {k: tuple(v) for k, v in expected.items()}

    queries = start_pipeline(spark, stream_data.log_dir, bootstrap, tmp_path)
    try:
        # A later order moves the watermark past every window above, which closes them.
        producer.send("orders", key=b"customer-late", value=b"1", timestamp_ms=START_MS + 10 * MINUTE_MS).get(30)
        producer.close()
        consumer = KafkaConsumer(bootstrap_servers=bootstrap, auto_offset_reset="earliest",
                                 enable_auto_commit=False, consumer_timeout_ms=1000)
        consumer.assign([TopicPartition("order-totals", 0)])
        totals = {}
        deadline = time.monotonic() + WAIT_S
        while len(totals) < len(expected) and time.monotonic() < deadline:
            for q in queries:
                if q.exception() is not None:
                    raise q.exception()
            for record in consumer:
                body = json.loads(record.value)
                window_ms = _epoch_ms(body["window_start"])
                key = (record.key.decode(), window_ms)
                assert key not in totals, f"{key} emitted twice"
                totals[key] = (body["total_cents"], body["orders"])
        consumer.close()
        assert totals == expected

        def parquet_rows():
            try:
                return spark.read.parquet(str(tmp_path / "order-totals")).collect()
            except Exception:  # noqa: BLE001 - nothing committed yet
                return []

        wait_until(lambda: len(parquet_rows()) >= len(expected), WAIT_S, "totals never reached Parquet", interval=0.5)
        from_parquet = {(r["customer"], int(r["window_start"].timestamp() * 1000)): (r["total_cents"], r["orders"])
                        for r in parquet_rows()}
        assert from_parquet == expected
    finally:
        for q in queries:
            q.stop()


def _epoch_ms(text: str) -> int:
    from datetime import datetime

    # to_json writes timestamps in the session time zone (UTC in these tests) with an offset.
    return int(datetime.fromisoformat(text).timestamp() * 1000)

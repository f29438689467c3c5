#!/usr/bin/env bash
# Measures produce throughput and latency
# (Kafka's bin/kafka-producer-perf-test.sh, i.e. org.apache.kafka.tools.ProducerPerformance):
#   bin/kafka-producer-perf-test.sh --topic t --num-records 100000 --record-size 100 --throughput -1 \
#       --producer-props bootstrap.servers=localhost:9092 acks=1 [--print-metrics]
# Add --pipeline [--connections N] [--window W] to send pre-built batches over raw pipelined
# connections, which outruns the broker (see kafka_py/tools/producer_performance.py).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.tools.producer_performance "$@"

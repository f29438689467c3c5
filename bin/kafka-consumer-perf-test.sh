#!/usr/bin/env bash
# Measures consume throughput
# (Kafka's bin/kafka-consumer-perf-test.sh, i.e. kafka.tools.ConsumerPerformance):
#   bin/kafka-consumer-perf-test.sh --bootstrap-server localhost:9092 --topic t --messages 100000 \
#       [--show-detailed-stats] [--timeout 10000] [--group g]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.tools.consumer_performance "$@"

#!/usr/bin/env bash
# Sends the lines of standard input as records
# (Kafka's bin/kafka-console-producer.sh, i.e. kafka.tools.ConsoleProducer):
#   bin/kafka-console-producer.sh --bootstrap-server localhost:9092 --topic t \
#       [--property parse.key=true --property key.separator=:] [--property parse.headers=true] \
#       [--producer-property acks=all] [--compression-codec [gzip|snappy|lz4|zstd]] [--sync]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.tools.console_producer "$@"

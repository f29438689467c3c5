#!/usr/bin/env bash
# Creates, lists, describes, alters (adds partitions to) and deletes topics
# (Kafka's bin/kafka-topics.sh, i.e. kafka.admin.TopicCommand):
#   bin/kafka-topics.sh --bootstrap-server localhost:9092 --create --topic t --partitions 3 --config retention.ms=60000
#   bin/kafka-topics.sh --bootstrap-server localhost:9092 --list | --describe [--topic t] | --delete --topic t
#   bin/kafka-topics.sh --bootstrap-server localhost:9092 --alter --topic t --partitions 6
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.topic_command "$@"

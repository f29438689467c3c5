#!/usr/bin/env bash
# Moves partitions between brokers (Kafka's bin/kafka-reassign-partitions.sh, i.e.
# kafka.admin.ReassignPartitionsCommand):
#   bin/kafka-reassign-partitions.sh --bootstrap-server localhost:9092 --generate \
#       --topics-to-move-json-file topics.json --broker-list 1,2,3
#   bin/kafka-reassign-partitions.sh --bootstrap-server localhost:9092 --execute \
#       --reassignment-json-file plan.json [--throttle 10000000] [--replica-alter-log-dirs-throttle B]
#   bin/kafka-reassign-partitions.sh --bootstrap-server localhost:9092 --verify --reassignment-json-file plan.json
#   bin/kafka-reassign-partitions.sh --bootstrap-server localhost:9092 --cancel --reassignment-json-file plan.json
#   bin/kafka-reassign-partitions.sh --bootstrap-server localhost:9092 --list
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.reassign_partitions_command "$@"

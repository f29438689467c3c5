#!/usr/bin/env bash
# Lists, describes, resets the offsets of, and deletes consumer groups
# (Kafka's bin/kafka-consumer-groups.sh, i.e. kafka.admin.ConsumerGroupCommand):
#   bin/kafka-consumer-groups.sh --bootstrap-server localhost:9092 --list [--state [stable,empty]]
#   bin/kafka-consumer-groups.sh --bootstrap-server localhost:9092 --describe --group g [--members [--verbose] | --state]
#   bin/kafka-consumer-groups.sh --bootstrap-server localhost:9092 --reset-offsets --group g --topic t --to-earliest --execute
#   bin/kafka-consumer-groups.sh --bootstrap-server localhost:9092 --delete --group g
#   bin/kafka-consumer-groups.sh --bootstrap-server localhost:9092 --delete-offsets --group g --topic t
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.consumer_group_command "$@"

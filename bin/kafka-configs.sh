#!/usr/bin/env bash
# Describes and alters dynamic topic and broker configs, client quotas and SCRAM credentials
# (Kafka's bin/kafka-configs.sh, i.e. kafka.admin.ConfigCommand):
#   bin/kafka-configs.sh --bootstrap-server localhost:9092 --entity-type topics --entity-name t --describe [--all]
#   bin/kafka-configs.sh --bootstrap-server localhost:9092 --entity-type topics --entity-name t --alter \
#       --add-config retention.ms=60000,cleanup.policy=[compact,delete] --delete-config segment.ms
#   bin/kafka-configs.sh --bootstrap-server localhost:9092 --entity-type brokers --entity-default --alter --add-config k=v
#   bin/kafka-configs.sh --bootstrap-server localhost:9092 --alter --entity-type users --entity-name alice \
#       --entity-type clients --entity-name app --add-config producer_byte_rate=1048576,request_percentage=50
#   bin/kafka-configs.sh --bootstrap-server localhost:9092 --describe --entity-type clients --entity-default
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.config_command "$@"

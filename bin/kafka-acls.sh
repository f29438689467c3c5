#!/usr/bin/env bash
# Adds, removes and lists ACLs (Kafka's bin/kafka-acls.sh, i.e. kafka.admin.AclCommand):
#   bin/kafka-acls.sh --bootstrap-server localhost:9092 --add --allow-principal User:alice --operation Read --topic t
#   bin/kafka-acls.sh --bootstrap-server localhost:9092 --add --allow-principal User:bob --producer --topic t
#   bin/kafka-acls.sh --bootstrap-server localhost:9092 --list --topic t --resource-pattern-type match
#   bin/kafka-acls.sh --bootstrap-server localhost:9093 --command-config admin.properties --remove --force --topic t
#   bin/kafka-acls.sh --authorizer-properties zookeeper.connect=localhost:2181 --list
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.acl_command "$@"

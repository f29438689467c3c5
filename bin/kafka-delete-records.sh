#!/usr/bin/env bash
# Deletes the records of partitions below given offsets
# (Kafka's bin/kafka-delete-records.sh, i.e. kafka.admin.DeleteRecordsCommand):
#   bin/kafka-delete-records.sh --bootstrap-server localhost:9092 --offset-json-file offsets.json
# with offsets.json: {"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.delete_records_command "$@"

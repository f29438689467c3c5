#!/usr/bin/env bash
# Fetches every partition from all its replicas and reports the largest lag and any mismatch
# (Kafka's bin/kafka-replica-verification.sh, i.e. kafka.tools.ReplicaVerificationTool):
#   bin/kafka-replica-verification.sh --broker-list localhost:9092 [--topic-white-list '.*'] [--report-interval-ms 30000]
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" kafka.tools.ReplicaVerificationTool "$@"

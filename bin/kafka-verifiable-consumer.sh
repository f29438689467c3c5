#!/usr/bin/env bash
# A consumer group member that prints its assignments, records and commits as JSON lines
# (Kafka's bin/kafka-verifiable-consumer.sh, i.e. org.apache.kafka.tools.VerifiableConsumer):
#   bin/kafka-verifiable-consumer.sh --bootstrap-server localhost:9092 --topic t --group-id g \
#       [--max-messages N] [--verbose] [--enable-autocommit] [--reset-policy earliest|latest|none]
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.kafka.tools.VerifiableConsumer "$@"

#!/usr/bin/env bash
# Produces the integers 0, 1, 2... and prints a JSON line for every acknowledged or failed send
# (Kafka's bin/kafka-verifiable-producer.sh, i.e. org.apache.kafka.tools.VerifiableProducer):
#   bin/kafka-verifiable-producer.sh --bootstrap-server localhost:9092 --topic t --max-messages 1000 \
#       [--throughput N] [--acks -1|0|1] [--value-prefix P] [--repeating-keys K] [--producer.config F]
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" org.apache.kafka.tools.VerifiableProducer "$@"

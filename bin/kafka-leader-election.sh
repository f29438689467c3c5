#!/usr/bin/env bash
# Elects the preferred or, for partitions without an in-sync leader, any live replica as leader
# (Kafka's bin/kafka-leader-election.sh, i.e. kafka.admin.LeaderElectionCommand):
#   bin/kafka-leader-election.sh --bootstrap-server localhost:9092 --election-type preferred --all-topic-partitions
#   bin/kafka-leader-election.sh --bootstrap-server localhost:9092 --election-type unclean --topic t --partition 0
#   bin/kafka-leader-election.sh --bootstrap-server localhost:9092 --election-type preferred \
#       --path-to-json-file partitions.json [--admin.config admin.properties]
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.leader_election_command "$@"

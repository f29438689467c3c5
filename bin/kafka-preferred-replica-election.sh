#!/usr/bin/env bash
# Moves leadership back to the preferred replicas (Kafka's deprecated
# bin/kafka-preferred-replica-election.sh, i.e. kafka.admin.PreferredReplicaLeaderElectionCommand):
#   bin/kafka-preferred-replica-election.sh --bootstrap-server localhost:9092 [--path-to-json-file partitions.json]
#   bin/kafka-preferred-replica-election.sh --zookeeper localhost:2181 [--path-to-json-file partitions.json]
# (--zookeeper writes /admin/preferred_replica_election, which the controller carries out.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"
ensure_python_env
exec "$KAFKA_PY_PYTHON" -m kafka_py.core.admin.preferred_replica_leader_election_command "$@"

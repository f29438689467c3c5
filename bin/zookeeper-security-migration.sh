#!/usr/bin/env bash
# Sets or clears the ZooKeeper ACLs of Kafka's znodes, recursively
# (Kafka's bin/zookeeper-security-migration.sh, i.e. kafka.admin.ZkSecurityMigrator):
#   bin/zookeeper-security-migration.sh --zookeeper.acl secure --zookeeper.connect localhost:2181/kafka
set -euo pipefail
exec "$(dirname "${BASH_SOURCE[0]}")/kafka-run-class.sh" kafka.admin.ZkSecurityMigrator "$@"

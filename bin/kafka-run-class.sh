#!/usr/bin/env bash
# Runs a Kafka class by its name, as Kafka's bin/kafka-run-class.sh does:
#   bin/kafka-run-class.sh [-daemon] [-name servicename] [-loggc] classname [opts]
#   bin/kafka-run-class.sh kafka.tools.GetOffsetShell --broker-list localhost:9092 --topic t --time -1
#
# kafka-py's counterparts of Kafka's classes are Python modules and bin/ scripts: each class
# below runs its counterpart. Classes of ZooKeeper (org.apache.zookeeper.*) run on Debian's
# ZooKeeper jars with Java, logging through config/tools-log4j.properties (KAFKA_LOG4J_OPTS,
# KAFKA_HEAP_OPTS and KAFKA_OPTS are passed to Java as Kafka's script passes them). Any other
# class fails as Java fails for a class that is not on its classpath, exit status 1.
# -daemon runs the class in the background, its output in $LOG_DIR/<servicename>.out;
# -loggc is accepted and ignored (no JVM of ours to log the collections of).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/kafka-env.sh"

usage() {
    echo "USAGE: $0 [-daemon] [-name servicename] [-loggc] classname [opts]"
    exit 1
}
[ $# -ge 1 ] || usage

daemon=0
name=""
while [ $# -gt 0 ]; do
    case "$1" in
        -name) [ $# -ge 2 ] || usage; name="$2"; shift 2 ;;
        -loggc) shift ;;
        -daemon) daemon=1; shift ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || usage
class="$1"; shift
bin_dir="$KAFKA_PY_HOME/bin"

# The classes kafka-py runs, each as "script <bin/ script>" or "module <python module>".
counterpart() {
    case "$1" in
        kafka.Kafka) echo "script kafka-server-start.sh" ;;
        kafka.admin.AclCommand) echo "script kafka-acls.sh" ;;
        kafka.admin.BrokerApiVersionsCommand) echo "script kafka-broker-api-versions.sh" ;;
        kafka.admin.ConfigCommand) echo "script kafka-configs.sh" ;;
        kafka.admin.ConsumerGroupCommand) echo "script kafka-consumer-groups.sh" ;;
        kafka.admin.DelegationTokenCommand) echo "script kafka-delegation-tokens.sh" ;;
        kafka.admin.DeleteRecordsCommand) echo "script kafka-delete-records.sh" ;;
        kafka.admin.FeatureCommand) echo "script kafka-features.sh" ;;
        kafka.admin.LeaderElectionCommand) echo "script kafka-leader-election.sh" ;;
        kafka.admin.LogDirsCommand) echo "script kafka-log-dirs.sh" ;;
        kafka.admin.PreferredReplicaLeaderElectionCommand) echo "script kafka-preferred-replica-election.sh" ;;
        kafka.admin.ReassignPartitionsCommand) echo "script kafka-reassign-partitions.sh" ;;
        kafka.admin.TopicCommand) echo "script kafka-topics.sh" ;;
        kafka.admin.ZkSecurityMigrator) echo "module kafka_py.core.admin.zk_security_migrator" ;;
        kafka.tools.ClusterTool) echo "script kafka-cluster.sh" ;;
        kafka.tools.ConsoleConsumer) echo "script kafka-console-consumer.sh" ;;
        kafka.tools.ConsoleProducer) echo "script kafka-console-producer.sh" ;;
        kafka.tools.ConsumerPerformance) echo "script kafka-consumer-perf-test.sh" ;;
        kafka.tools.DumpLogSegments) echo "script kafka-dump-log.sh" ;;
        kafka.tools.GetOffsetShell) echo "module kafka_py.core.tools.get_offset_shell" ;;
        kafka.tools.MirrorMaker) echo "module kafka_py.core.tools.mirror_maker" ;;
        kafka.tools.ReplicaVerificationTool) echo "module kafka_py.core.tools.replica_verification_tool" ;;
        kafka.tools.StorageTool) echo "script kafka-storage.sh" ;;
        kafka.tools.StreamsResetter) echo "module kafka_py.core.tools.streams_resetter" ;;
        org.apache.kafka.shell.MetadataShell) echo "script kafka-metadata-shell.sh" ;;
        org.apache.kafka.tools.ProducerPerformance) echo "script kafka-producer-perf-test.sh" ;;
        org.apache.kafka.tools.VerifiableConsumer) echo "module kafka_py.tools.verifiable_consumer" ;;
        org.apache.kafka.tools.VerifiableProducer) echo "module kafka_py.tools.verifiable_producer" ;;
        *) return 1 ;;
    esac
}

# Every class of the table whose counterpart is installed.
known_classes() {
    local c kind target
    for c in kafka.Kafka kafka.admin.AclCommand kafka.admin.BrokerApiVersionsCommand kafka.admin.ConfigCommand \
             kafka.admin.FeatureCommand kafka.tools.ClusterTool \
             kafka.admin.ConsumerGroupCommand kafka.admin.DelegationTokenCommand kafka.admin.DeleteRecordsCommand \
             kafka.admin.LeaderElectionCommand \
             kafka.admin.LogDirsCommand kafka.admin.PreferredReplicaLeaderElectionCommand \
             kafka.admin.ReassignPartitionsCommand kafka.admin.TopicCommand kafka.admin.ZkSecurityMigrator \
             kafka.tools.ConsoleConsumer kafka.tools.ConsoleProducer kafka.tools.ConsumerPerformance \
             kafka.tools.DumpLogSegments kafka.tools.GetOffsetShell kafka.tools.MirrorMaker \
             kafka.tools.ReplicaVerificationTool kafka.tools.StorageTool kafka.tools.StreamsResetter \
             org.apache.kafka.shell.MetadataShell org.apache.kafka.tools.ProducerPerformance \
             org.apache.kafka.tools.VerifiableConsumer org.apache.kafka.tools.VerifiableProducer; do
        read -r kind target <<< "$(counterpart "$c")"
        if [ "$kind" = module ] || [ -x "$bin_dir/$target" ]; then echo "$c"; fi
    done
}

class_not_found() {
    # Java's own words for a main class it cannot load, then where to look
    echo "Error: Could not find or load main class $class" >&2
    echo "Caused by: java.lang.ClassNotFoundException: $class" >&2
    echo "kafka-run-class.sh runs these Kafka classes with kafka-py: $(known_classes | paste -sd ' ' -)," \
         "and ZooKeeper's org.apache.zookeeper.* classes" >&2
    exit 1
}

run() {
    if [ "$daemon" = 1 ]; then
        local log_dir="${LOG_DIR:-/tmp/kafka-py-logs}"
        mkdir -p "$log_dir"
        nohup "$@" > "$log_dir/${name:-${class##*.}}.out" 2>&1 < /dev/null &
    else
        exec "$@"
    fi
}

case "$class" in
    org.apache.zookeeper.*)
        ensure_zookeeper
        if [ "$class" = org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka ]; then
            # Kafka's wrapper of ZooKeeperMain that adds -zk-tls-config-file; the brokers of
            # kafka-py reach ZooKeeper without TLS, and so does the shell
            for arg in "$@"; do
                if [ "$arg" = "-zk-tls-config-file" ]; then
                    echo "Error: -zk-tls-config-file is not supported: kafka-py connects to ZooKeeper without TLS" >&2
                    exit 1
                fi
            done
            class=org.apache.zookeeper.ZooKeeperMain
        fi
        log4j_opts="${KAFKA_LOG4J_OPTS:--Dlog4j.configuration=file:$KAFKA_PY_HOME/config/tools-log4j.properties}"
        # shellcheck disable=SC2086  # the *_OPTS variables hold several options, as in Kafka's script
        run java ${KAFKA_HEAP_OPTS:--Xmx256M} $log4j_opts -cp "$ZOOKEEPER_JAR:$SLF4J_LOG4J_JAR:$LOG4J_JAR" \
            ${KAFKA_OPTS:-} "$class" "$@"
        exit 0
        ;;
esac

target="$(counterpart "$class")" || class_not_found
read -r kind target <<< "$target"
if [ "$kind" = module ]; then
    ensure_python_env
    run "$KAFKA_PY_PYTHON" -m "$target" "$@"
    exit 0
fi
[ -x "$bin_dir/$target" ] || class_not_found
if [ "$daemon" = 1 ] && [ "$class" = kafka.Kafka ]; then
    # the broker's own start script daemonizes it and writes its pid file
    exec "$bin_dir/$target" -daemon "$@"
fi
run "$bin_dir/$target" "$@"

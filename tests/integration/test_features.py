"""Feature versioning (KIP-584) in ZooKeeper mode: /feature written by the controller in
Kafka's JSON, every broker's FinalizedFeatureCache following it, ApiVersions v3 answers carrying
the supported and finalized features, and UpdateFeatures validated as Kafka 2.8.2's controller
does, through kafka-python's admin client and the raw wire protocol.

The brokers support features through kafka-py's internal ``supported.features`` key (Kafka
2.8.2 defines none). Broker 0 starts first and becomes the controller; a new cluster's first
controller finalizes what it supports, so broker 0 supports the narrower range of
``feature_b`` and broker 1 (started second) the wider one.
"""
from __future__ import annotations

import json
import re
import subprocess

import pytest
from kafka.admin import KafkaAdminClient
from kio.schema.update_features.v0.request import FeatureUpdateKey, UpdateFeaturesRequest
from kio.static.primitive import i16

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from tests.integration.broker_harness import (
    ROOT,
    BrokerProcess,
    RawClient,
    free_port,
    read_znode,
    unique_chroot,
    wait_until,
)
from tests.integration.kraft_harness import listener_overrides


@pytest.fixture(scope="module")
def cluster(zookeeper, tmp_path_factory):
    chroot = unique_chroot("features")
    brokers = []
    for broker_id, features in ((0, "feature_a:1-3,feature_b:1-2"), (1, "feature_a:1-3,feature_b:1-5")):
        broker = BrokerProcess(tmp_path_factory.mktemp(f"features{broker_id}-"), zookeeper.connect_string, chroot,
                               broker_id, overrides={"supported.features": features})
        if broker_id == 0:
            # a SASL listener too, whose ApiVersions is answered before authentication
            broker.sasl_port = free_port()
            broker.overrides.update(listener_overrides(broker, {"SASL_PLAINTEXT": ("SASL_PLAINTEXT",
                                                                                   broker.sasl_port)}))
            broker.overrides.update({
                "sasl.enabled.mechanisms": "PLAIN",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config":
                    'org.apache.kafka.common.security.plain.PlainLoginModule required user_admin="admin-secret";'})
            broker.write_config()
        brokers.append(broker)
        broker.start()  # one at a time: broker 0 is the controller
    yield brokers
    for broker in brokers:
        if broker.running:
            broker.stop()


@pytest.fixture(scope="module")
def admin(cluster):
    client = KafkaAdminClient(bootstrap_servers=",".join(b.bootstrap for b in cluster))
    yield client
    client.close()


def feature_znode(broker: BrokerProcess) -> dict:
    client = broker.zk()
    try:
        data, _ = read_znode(client, "/feature")
    finally:
        client.stop()
        client.close()
    return json.loads(data)


def api_versions_features(broker: BrokerProcess, port: int | None = None):
    module = __import__("kio.schema.api_versions.v3.request", fromlist=["ApiVersionsRequest"])
    with RawClient(port or broker.port) as client:
        response = client.request(ApiKeys.API_VERSIONS, 3, module.ApiVersionsRequest(
            client_software_name="test", client_software_version="1"))
    return ({f.name: (int(f.min_version), int(f.max_version)) for f in response.supported_features},
            {f.name: (int(f.min_version_level), int(f.max_version_level)) for f in response.finalized_features},
            int(response.finalized_features_epoch))


def update(broker: BrokerProcess, *updates: tuple[str, int, bool]):
    request = UpdateFeaturesRequest(feature_updates=tuple(
        FeatureUpdateKey(feature=name, max_version_level=i16(level), allow_downgrade=downgrade)
        for name, level, downgrade in updates))
    with RawClient(broker.port) as client:
        return client.request(ApiKeys.UPDATE_FEATURES, 0, request)


def results(response) -> dict[str, tuple[Errors, str]]:
    return {r.feature: (Errors.for_code(r.error_code), r.error_message) for r in response.results}


def test_new_cluster_finalizes_the_controllers_features(cluster):
    node = feature_znode(cluster[0])
    assert node == {"version": 1, "status": 1, "features": {
        "feature_a": {"min_version_level": 1, "max_version_level": 3},
        "feature_b": {"min_version_level": 1, "max_version_level": 2}}}
    registration = cluster[1].registration()
    assert registration["features"] == {"feature_a": {"min_version": 1, "max_version": 3},
                                        "feature_b": {"min_version": 1, "max_version": 5}}
    supported, finalized, epoch = api_versions_features(cluster[1])
    assert supported == {"feature_a": (1, 3), "feature_b": (1, 5)}
    assert finalized == {"feature_a": (1, 3), "feature_b": (1, 2)}
    assert epoch >= 0


def test_downgrade_on_the_controller_is_seen_by_the_other_broker(cluster, admin):
    _, _, epoch_before = api_versions_features(cluster[1])
    assert admin.update_features({"feature_a": ("SAFE_DOWNGRADE", 2)}) == {"feature_a": "OK"}
    assert feature_znode(cluster[0])["features"]["feature_a"] == {"min_version_level": 1, "max_version_level": 2}
    wait_until(lambda: api_versions_features(cluster[1])[1].get("feature_a") == (1, 2), 30,
               "broker 1 never saw feature_a finalized at 1-2")
    _, finalized, epoch = api_versions_features(cluster[1])
    assert epoch > epoch_before
    described = admin.describe_features()
    assert described["feature_a"]["finalized"] == (1, 2)
    # and back up, without the downgrade flag
    assert admin.update_features({"feature_a": 3}) == {"feature_a": "OK"}
    wait_until(lambda: api_versions_features(cluster[1])[1].get("feature_a") == (1, 3), 30,
               "broker 1 never saw feature_a finalized at 1-3")


def test_validation_errors_per_feature(cluster):
    response = update(cluster[0], ("unknown_feature", 1, False), ("feature_a", 1, False), ("feature_b", 5, False),
                      ("feature_a_again", 0, False))
    assert Errors.for_code(response.error_code) is Errors.NONE
    assert results(response) == {
        "unknown_feature": (Errors.INVALID_REQUEST, "Could not apply finalized feature update because the "
                                                    "provided feature is not supported."),
        "feature_a": (Errors.INVALID_REQUEST, "Can not downgrade finalized feature from existing maxVersionLevel:3 "
                                              "to provided maxVersionLevel:1 without setting the allowDowngrade "
                                              "flag in the request."),
        # broker 0, the controller, supports feature_b up to 2 only
        "feature_b": (Errors.INVALID_REQUEST, "Could not apply finalized feature update because brokers were "
                                              "found to have incompatible versions for the feature."),
        "feature_a_again": (Errors.INVALID_REQUEST, "Can not provide maxVersionLevel: 0 less than 1 without "
                                                    "setting the allowDowngrade flag to true in the request."),
    }
    response = update(cluster[0], ("feature_a", 0, False), ("feature_b", 2, False), ("", 1, False))
    assert results(response) == {
        "feature_a": (Errors.INVALID_REQUEST, "Can not provide maxVersionLevel: 0 less than 1 without setting "
                                              "the allowDowngrade flag to true in the request."),
        "feature_b": (Errors.INVALID_REQUEST, "Can not upgrade a finalized feature from existing "
                                              "maxVersionLevel:2 to the same value."),
        "": (Errors.INVALID_REQUEST, "Feature name can not be empty."),
    }
    response = update(cluster[0], ("feature_a", 4, True), ("never_finalized", 0, True))
    assert results(response) == {
        "feature_a": (Errors.INVALID_REQUEST, "When the allowDowngrade flag set in the request, the provided "
                                              "maxVersionLevel:4 can not be greater than existing maxVersionLevel:3."),
        "never_finalized": (Errors.INVALID_REQUEST, "Can not delete non-existing finalized feature."),
    }
    # nothing of it reached /feature
    assert feature_znode(cluster[0])["features"] == {
        "feature_a": {"min_version_level": 1, "max_version_level": 3},
        "feature_b": {"min_version_level": 1, "max_version_level": 2}}


def test_a_broker_that_cannot_run_the_finalized_features_does_not_start(cluster, tmp_path_factory):
    # feature_a is finalized at 1-3; this broker does not know it
    broker = BrokerProcess(tmp_path_factory.mktemp("features-incompatible"), cluster[0].zk_hosts, cluster[0].chroot,
                           2, overrides={"supported.features": "feature_b:1-5"})
    broker.start(wait=False)
    try:
        broker.process.wait(timeout=120)
    finally:
        status = broker.kill() if broker.running else broker.stop()  # stop() collects the exit status
    assert status != 0
    output = broker.output()
    assert "FinalizedFeatureCache update failed since feature compatibility checks failed!" in output, broker.tail()
    assert broker.registration() is None


def test_non_controller_answers_not_controller(cluster):
    response = update(cluster[1], ("feature_a", 2, True))
    assert Errors.for_code(response.error_code) is Errors.NOT_CONTROLLER
    assert response.results == ()


def test_deletion_with_allow_downgrade(cluster, admin):
    assert admin.update_features({"feature_b": ("UNSAFE_DOWNGRADE", 0)}) == {"feature_b": "OK"}
    assert "feature_b" not in feature_znode(cluster[0])["features"]
    wait_until(lambda: "feature_b" not in api_versions_features(cluster[1])[1], 30,
               "broker 1 still lists feature_b as finalized")


def test_ibp_below_2_7_disables_feature_versioning(zookeeper, tmp_path_factory):
    broker = BrokerProcess(tmp_path_factory.mktemp("features-old-ibp"), zookeeper.connect_string,
                           unique_chroot("features-old-ibp"), 0,
                           overrides={"supported.features": "feature_a:1-3", "inter.broker.protocol.version": "2.6",
                                      "log.message.format.version": "2.6"})
    broker.start()
    try:
        assert feature_znode(broker) == {"version": 1, "status": 0, "features": {}}
        supported, finalized, epoch = api_versions_features(broker)
        assert supported == {"feature_a": (1, 3)} and finalized == {} and epoch == -1
        response = update(broker, ("feature_a", 2, True))
        assert Errors.for_code(response.error_code) is Errors.INVALID_REQUEST
        assert response.error_message == "Feature versioning system is disabled."
    finally:
        assert broker.stop() == 0, broker.tail()


# -- bin/kafka-features.sh (kafka.admin.FeatureCommand) ---------------------------------------

def features_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-features.sh"), *args], capture_output=True, text=True,
                          timeout=120)


def test_features_tool_describe(cluster):
    result = features_tool("--bootstrap-server", cluster[1].bootstrap, "--describe")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert re.fullmatch(r"Feature: feature_a\tSupportedMinVersion: 1\tSupportedMaxVersion: 3\t"
                        r"FinalizedMinVersionLevel: 1\tFinalizedMaxVersionLevel: 3\tEpoch: \d+", lines[0]), lines[0]
    # deleted by the test before: supported (up to 2 on broker 0, 5 on broker 1, whichever
    # answered), not finalized
    assert re.fullmatch(r"Feature: feature_b\tSupportedMinVersion: 1\tSupportedMaxVersion: [25]\t"
                        r"FinalizedMinVersionLevel: -\tFinalizedMaxVersionLevel: -\tEpoch: \d+", lines[1]), lines[1]
    from_controller = features_tool("--bootstrap-server", cluster[1].bootstrap, "--describe", "--from-controller")
    assert from_controller.returncode == 0, from_controller.stderr
    assert "\tSupportedMaxVersion: 2\t" in from_controller.stdout.splitlines()[1]  # broker 0's range


def test_features_tool_upgrade_and_downgrade_all(cluster):
    # the controller's (broker 0's) features are the ones the tool finalizes
    dry = features_tool("--bootstrap-server", cluster[1].bootstrap, "--upgrade-all", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == ("Expected feature updates:      [Add]\tFeature: feature_b\tExistingFinalizedMaxVersion: -"
                          "\tNewFinalizedMaxVersion: 2\n")
    assert "feature_b" not in feature_znode(cluster[0])["features"]

    applied = features_tool("--bootstrap-server", cluster[1].bootstrap, "--upgrade-all")
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout == ("      [Add]\tFeature: feature_b\tExistingFinalizedMaxVersion: -"
                              "\tNewFinalizedMaxVersion: 2\tResult: OK\n")
    assert feature_znode(cluster[0])["features"]["feature_b"] == {"min_version_level": 1, "max_version_level": 2}
    again = features_tool("--bootstrap-server", cluster[1].bootstrap, "--upgrade-all")
    assert again.returncode == 0 and again.stdout == ""
    nothing = features_tool("--bootstrap-server", cluster[0].bootstrap, "--downgrade-all", "--dry-run")
    assert nothing.returncode == 0 and nothing.stdout == ""


def test_features_tool_downgrade_all_to_the_features_it_knows(cluster, tmp_path):
    """Before a rolling downgrade to a release that supports feature_a up to 2 and no feature_b,
    the tool is told that release's features: finalized feature_a 1-3 is lowered to 1-2 and
    feature_b (finalized 1-2 by the test before) deleted, as in Kafka 2.8's
    FeatureCommandTest.testDowngradeFeaturesSuccess."""
    assert feature_znode(cluster[0])["features"] == {
        "feature_a": {"min_version_level": 1, "max_version_level": 3},
        "feature_b": {"min_version_level": 1, "max_version_level": 2}}
    older = tmp_path / "older-release.properties"
    older.write_text("supported.features=feature_a:1-2\n")
    downgrade = ("--bootstrap-server", cluster[1].bootstrap, "--command-config", str(older), "--downgrade-all")
    lines = ("[Downgrade]\tFeature: feature_a\tExistingFinalizedMaxVersion: 3\tNewFinalizedMaxVersion: 2",
             "   [Delete]\tFeature: feature_b\tExistingFinalizedMaxVersion: 2\tNewFinalizedMaxVersion: -")
    dry = features_tool(*downgrade, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout == "Expected feature updates:" + "\n".join(lines) + "\n"
    assert len(feature_znode(cluster[0])["features"]) == 2

    applied = features_tool(*downgrade)
    assert applied.returncode == 0, applied.stderr
    assert applied.stdout == "".join(f"{line}\tResult: OK\n" for line in lines)
    assert feature_znode(cluster[0])["features"] == {"feature_a": {"min_version_level": 1, "max_version_level": 2}}
    for broker in cluster:
        wait_until(lambda broker=broker: api_versions_features(broker)[1] == {"feature_a": (1, 2)}, 30,
                   f"broker {broker.broker_id} never followed the downgrade")
    assert features_tool(*downgrade).stdout == ""

    # and back, with the features of the running release (the controller's)
    restored = features_tool("--bootstrap-server", cluster[1].bootstrap, "--upgrade-all")
    assert restored.returncode == 0, restored.stderr
    assert feature_znode(cluster[0])["features"] == {
        "feature_a": {"min_version_level": 1, "max_version_level": 3},
        "feature_b": {"min_version_level": 1, "max_version_level": 2}}
    older.write_text("supported.features=feature_a:one-2\n")
    bad = features_tool(*downgrade)
    assert bad.returncode == 1 and "supported.features" in bad.stderr and "Traceback" not in bad.stderr, bad.stderr


def test_features_tool_bad_options(cluster):
    for args, message in (
            (("--bootstrap-server", cluster[0].bootstrap),
             "Command must include exactly one action: --describe, --upgrade-all, --downgrade-all."),
            (("--bootstrap-server", cluster[0].bootstrap, "--describe", "--upgrade-all"),
             "Command must include exactly one action: --describe, --upgrade-all, --downgrade-all."),
            (("--describe",), 'Missing required argument "[bootstrap-server]"'),
            (("--bootstrap-server", cluster[0].bootstrap, "--describe", "--dry-run"),
             "Command can contain --dry-run option only when either --upgrade-all or --downgrade-all actions are "
             "provided.")):
        result = features_tool(*args)
        assert result.returncode == 1, args
        assert result.stderr.splitlines()[0] == message


# -- bin/kafka-cluster.sh (kafka.tools.ClusterTool) -------------------------------------------

def cluster_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-cluster.sh"), *args], capture_output=True, text=True,
                          timeout=120)


def test_cluster_tool_in_zookeeper_mode(cluster):
    client = cluster[0].zk()
    try:
        cluster_id = json.loads(read_znode(client, "/cluster/id")[0])["id"]
    finally:
        client.stop()
        client.close()
    result = cluster_tool("cluster-id", "--bootstrap-server", cluster[1].bootstrap)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Cluster ID: {cluster_id}\n"
    # a ZooKeeper-mode broker does not list UnregisterBroker
    result = cluster_tool("unregister", "-b", cluster[0].bootstrap, "--id", "1")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The target cluster does not support the broker unregistration API.\n"
    assert cluster[1].registration() is not None
    missing = cluster_tool("cluster-id")
    assert missing.returncode == 1 and missing.stderr == "Please specify --bootstrap-server.\n"


def test_a_sasl_listener_answers_api_versions_before_authentication_with_the_features(cluster):
    """Kafka's SaslServerAuthenticator answers with the same supplier as KafkaApis: a client
    that asks ApiVersions first on a SASL listener learns the features there too."""
    broker = cluster[0]
    before_sasl = api_versions_features(broker, port=broker.sasl_port)
    assert before_sasl[0] == {"feature_a": (1, 3), "feature_b": (1, 2)}
    assert before_sasl == api_versions_features(broker)

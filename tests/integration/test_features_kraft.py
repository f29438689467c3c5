"""Feature versioning (KIP-584) in KRaft mode: UpdateFeatures sent to a broker is forwarded to
the active controller, whose FeatureControlManager validates it (Kafka 2.8.2's rules and
INVALID_UPDATE_VERSION messages) and commits FeatureLevelRecords; the broker's ApiVersions
answers then carry the finalized features from its metadata, with the batch offset as epoch.
One combined node (broker and controller in one process) through kafka-python's admin client
and the raw wire protocol."""
from __future__ import annotations

import subprocess

import pytest
from kafka.admin import KafkaAdminClient
from kio.schema.update_features.v0.request import FeatureUpdateKey, UpdateFeaturesRequest
from kio.static.primitive import i16

from kafka_py.clients.common.protocol.api_keys import ApiKeys
from kafka_py.clients.common.protocol.errors import Errors
from tests.integration.broker_harness import ROOT, RawClient, wait_until
from tests.integration.kraft_harness import KRaftCombinedProcess


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    process = KRaftCombinedProcess(tmp_path_factory.mktemp("features-kraft"),
                                   overrides={"supported.features": "feature_a:1-3"})
    process.start()
    yield process
    if process.running:
        assert process.stop() == 0, process.tail()


@pytest.fixture(scope="module")
def admin(node):
    client = KafkaAdminClient(bootstrap_servers=node.bootstrap)
    yield client
    client.close()


def update(node, *updates: tuple[str, int, bool]):
    request = UpdateFeaturesRequest(feature_updates=tuple(
        FeatureUpdateKey(feature=name, max_version_level=i16(level), allow_downgrade=downgrade)
        for name, level, downgrade in updates))
    with RawClient(node.port) as client:
        response = client.request(ApiKeys.UPDATE_FEATURES, 0, request)
    return Errors.for_code(response.error_code), {
        r.feature: (Errors.for_code(r.error_code), r.error_message) for r in response.results}


def test_update_is_forwarded_committed_and_seen_in_api_versions(node, admin):
    described = admin.describe_features()
    assert described == {"feature_a": {"supported": (1, 3)}}  # nothing finalized in a new KRaft cluster
    assert admin.update_features({"feature_a": 2}) == {"feature_a": "OK"}
    wait_until(lambda: admin.describe_features()["feature_a"].get("finalized") == (1, 2), 30,
               "the broker never listed feature_a as finalized")
    described = admin.describe_features()["feature_a"]
    assert described["finalized_epoch"] >= 0
    assert admin.update_features({"feature_a": 3}) == {"feature_a": "OK"}
    wait_until(lambda: admin.describe_features()["feature_a"].get("finalized") == (1, 3), 30,
               "the broker never listed feature_a finalized at 1-3")
    assert admin.describe_features()["feature_a"]["finalized_epoch"] > described["finalized_epoch"]


def test_validation_errors_per_feature(node):
    error, results = update(node, ("unknown_feature", 1, False), ("feature_a", 4, False), ("feature_a_zero", 0, True))
    assert error is Errors.NONE
    assert results == {
        "unknown_feature": (Errors.INVALID_UPDATE_VERSION,
                            "The controller does not support the given feature range."),
        "feature_a": (Errors.INVALID_UPDATE_VERSION, "The controller does not support the given feature range."),
        "feature_a_zero": (Errors.INVALID_UPDATE_VERSION, "The upper value for the new range cannot be less than 1."),
    }
    error, results = update(node, ("feature_a", 1, False))
    assert results == {"feature_a": (Errors.INVALID_UPDATE_VERSION,
                                     "Can't downgrade the maximum version of this feature without setting "
                                     "downgradable to true.")}
    error, results = update(node, ("feature_a", 1, True))
    assert results == {"feature_a": (Errors.NONE, None)}
    wait_until(lambda: _finalized(node) == (1, 1), 30, "the downgrade never reached the broker")


def _finalized(node):
    module = __import__("kio.schema.api_versions.v3.request", fromlist=["ApiVersionsRequest"])
    with RawClient(node.port) as client:
        response = client.request(ApiKeys.API_VERSIONS, 3, module.ApiVersionsRequest(
            client_software_name="test", client_software_version="1"))
    levels = {f.name: (int(f.min_version_level), int(f.max_version_level)) for f in response.finalized_features}
    return levels.get("feature_a")


# -- bin/kafka-cluster.sh (kafka.tools.ClusterTool) -------------------------------------------

def cluster_tool(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(ROOT / "bin" / "kafka-cluster.sh"), *args], capture_output=True, text=True,
                          timeout=120)


def test_cluster_tool_cluster_id_and_unregister(node):
    result = cluster_tool("cluster-id", "--bootstrap-server", node.bootstrap)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"Cluster ID: {node.cluster_id}\n"
    # forwarded to the controller, which knows no broker 7
    result = cluster_tool("unregister", "--bootstrap-server", node.bootstrap, "--id", "7")
    assert result.returncode == 1
    assert result.stderr.startswith("org.apache.kafka.common.errors.BrokerIdNotRegisteredException: "), result.stderr

"""Port of core/src/main/scala/kafka/security/authorizer (Kafka 2.8.2) and of the clients'
org.apache.kafka.server.authorizer and org.apache.kafka.common.acl / .resource packages:
ACL-based authorization of every request.

``authorizer.class.name`` names a Java class in Kafka; here the Kafka class names map to the
Python ports (``AUTHORIZER_CLASSES``), and any other name stops the broker at startup. The
package is imported by the broker's config, so this module stays free of ZooKeeper imports:
the authorizer itself is loaded on demand by ``create_authorizer``.
"""
from __future__ import annotations

import importlib
from typing import Any

# Kafka's class names -> "module:class" of the port. kafka.security.auth.SimpleAclAuthorizer is
# 2.8's deprecated name of the same authorizer (a wrapper delegating to AclAuthorizer).
AUTHORIZER_CLASSES = {
    "kafka.security.authorizer.AclAuthorizer": "kafka_py.core.security.authorizer.acl_authorizer:AclAuthorizer",
    "kafka.security.auth.SimpleAclAuthorizer": "kafka_py.core.security.authorizer.acl_authorizer:AclAuthorizer",
    # KRaft mode's (Kafka 3.2+): ACLs as metadata records
    "org.apache.kafka.metadata.authorizer.StandardAuthorizer":
        "kafka_py.metadata.authorizer.standard_authorizer:StandardAuthorizer",
}
# The authorizers that keep their ACLs in ZooKeeper, and the one that keeps them in the
# metadata log: server/kafka_config.py allows each only in its own mode.
ZOOKEEPER_AUTHORIZER_CLASSES = frozenset({"kafka.security.authorizer.AclAuthorizer",
                                          "kafka.security.auth.SimpleAclAuthorizer"})
METADATA_AUTHORIZER_CLASSES = frozenset({"org.apache.kafka.metadata.authorizer.StandardAuthorizer"})

# Broker configs the AclAuthorizer reads (AclAuthorizer.SuperUsersProp and friends); they are
# not KafkaConfig keys in Kafka either, only passed through to the authorizer.
SUPER_USERS_PROP = "super.users"
ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP = "allow.everyone.if.no.acl.found"
ZK_URL_PROP = "authorizer.zookeeper.url"
ZK_CONNECTION_TIMEOUT_PROP = "authorizer.zookeeper.connection.timeout.ms"
ZK_SESSION_TIMEOUT_PROP = "authorizer.zookeeper.session.timeout.ms"
ZK_MAX_IN_FLIGHT_REQUESTS_PROP = "authorizer.zookeeper.max.in.flight.requests"
AUTHORIZER_CONFIG_KEYS = frozenset({
    SUPER_USERS_PROP, ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_PROP, ZK_URL_PROP, ZK_CONNECTION_TIMEOUT_PROP,
    ZK_SESSION_TIMEOUT_PROP, ZK_MAX_IN_FLIGHT_REQUESTS_PROP,
})


def create_authorizer(class_name: str) -> Any:
    """AuthorizerUtils.createAuthorizer: a new, unconfigured authorizer for a Kafka class name;
    ValueError for a class kafka-py has no port of."""
    target = AUTHORIZER_CLASSES.get(class_name.strip())
    if target is None:
        raise ValueError(f"Authorizer class {class_name} is not available in kafka-py; supported: "
                         + ", ".join(sorted(AUTHORIZER_CLASSES)))
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)()


__all__ = ["AUTHORIZER_CLASSES", "AUTHORIZER_CONFIG_KEYS", "METADATA_AUTHORIZER_CLASSES",
           "ZOOKEEPER_AUTHORIZER_CLASSES", "create_authorizer"]

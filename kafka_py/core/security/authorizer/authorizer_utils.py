"""Port of core/src/main/scala/kafka/security/authorizer/AuthorizerUtils.scala (Kafka 2.8.2):
creating the configured authorizer, and the checks every ACL binding must pass."""
from __future__ import annotations

from kafka_py.core.security.authorizer import create_authorizer
from kafka_py.core.security.authorizer.acl import CLUSTER_NAME, AclBinding


def validate_acl_binding(acl_binding: AclBinding) -> None:
    if acl_binding.is_unknown:
        raise ValueError("ACL binding contains unknown elements")


def is_cluster_resource(name: str) -> bool:
    return name == CLUSTER_NAME


__all__ = ["create_authorizer", "is_cluster_resource", "validate_acl_binding"]

"""StopReplica version 0 (generated)."""
from .request import StopReplicaRequest
from .response import StopReplicaResponse

__all__ = ("StopReplicaRequest", "StopReplicaResponse")

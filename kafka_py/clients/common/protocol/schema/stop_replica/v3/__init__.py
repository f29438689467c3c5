"""StopReplica version 3 (generated)."""
from .request import StopReplicaRequest
from .response import StopReplicaResponse

__all__ = ("StopReplicaRequest", "StopReplicaResponse")

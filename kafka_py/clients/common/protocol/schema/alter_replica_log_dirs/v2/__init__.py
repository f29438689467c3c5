"""AlterReplicaLogDirs version 2 (generated)."""
from .request import AlterReplicaLogDirsRequest
from .response import AlterReplicaLogDirsResponse

__all__ = ("AlterReplicaLogDirsRequest", "AlterReplicaLogDirsResponse")

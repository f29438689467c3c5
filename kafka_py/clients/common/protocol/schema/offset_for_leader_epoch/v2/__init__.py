"""OffsetForLeaderEpoch version 2 (generated)."""
from .request import OffsetForLeaderEpochRequest
from .response import OffsetForLeaderEpochResponse

__all__ = ("OffsetForLeaderEpochRequest", "OffsetForLeaderEpochResponse")

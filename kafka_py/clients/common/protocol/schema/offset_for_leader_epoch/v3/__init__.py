"""OffsetForLeaderEpoch version 3 (generated)."""
from .request import OffsetForLeaderEpochRequest
from .response import OffsetForLeaderEpochResponse

__all__ = ("OffsetForLeaderEpochRequest", "OffsetForLeaderEpochResponse")

"""OffsetCommit version 1 (generated)."""
from .request import OffsetCommitRequest
from .response import OffsetCommitResponse

__all__ = ("OffsetCommitRequest", "OffsetCommitResponse")

"""OffsetFetch version 0 (generated)."""
from .request import OffsetFetchRequest
from .response import OffsetFetchResponse

__all__ = ("OffsetFetchRequest", "OffsetFetchResponse")

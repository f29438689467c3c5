"""ListOffsets version 0 (generated)."""
from .request import ListOffsetsRequest
from .response import ListOffsetsResponse

__all__ = ("ListOffsetsRequest", "ListOffsetsResponse")

"""UpdateMetadata version 3 (generated)."""
from .request import UpdateMetadataRequest
from .response import UpdateMetadataResponse

__all__ = ("UpdateMetadataRequest", "UpdateMetadataResponse")

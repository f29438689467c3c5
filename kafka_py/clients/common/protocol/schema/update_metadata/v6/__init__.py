"""UpdateMetadata version 6 (generated)."""
from .request import UpdateMetadataRequest
from .response import UpdateMetadataResponse

__all__ = ("UpdateMetadataRequest", "UpdateMetadataResponse")

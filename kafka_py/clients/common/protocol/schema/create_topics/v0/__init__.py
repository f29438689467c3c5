"""CreateTopics version 0 (generated)."""
from .request import CreateTopicsRequest
from .response import CreateTopicsResponse

__all__ = ("CreateTopicsRequest", "CreateTopicsResponse")

"""CreateTopics version 1 (generated)."""
from .request import CreateTopicsRequest
from .response import CreateTopicsResponse

__all__ = ("CreateTopicsRequest", "CreateTopicsResponse")

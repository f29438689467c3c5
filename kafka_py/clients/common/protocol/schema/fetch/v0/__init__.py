"""Fetch version 0 (generated)."""
from .request import FetchRequest
from .response import FetchResponse

__all__ = ("FetchRequest", "FetchResponse")

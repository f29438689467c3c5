"""Fetch version 2 (generated)."""
from .request import FetchRequest
from .response import FetchResponse

__all__ = ("FetchRequest", "FetchResponse")

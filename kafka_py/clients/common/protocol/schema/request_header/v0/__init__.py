"""Request header version 0."""
from .header import RequestHeader

__all__ = ("RequestHeader",)

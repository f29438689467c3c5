"""AlterIsr version 0 (generated)."""
from .request import AlterIsrRequest
from .response import AlterIsrResponse

__all__ = ("AlterIsrRequest", "AlterIsrResponse")

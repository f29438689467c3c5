"""LeaderAndIsr version 3 (generated)."""
from .request import LeaderAndIsrRequest
from .response import LeaderAndIsrResponse

__all__ = ("LeaderAndIsrRequest", "LeaderAndIsrResponse")

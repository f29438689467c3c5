"""ControlledShutdown version 1 (generated)."""
from .request import ControlledShutdownRequest
from .response import ControlledShutdownResponse

__all__ = ("ControlledShutdownRequest", "ControlledShutdownResponse")

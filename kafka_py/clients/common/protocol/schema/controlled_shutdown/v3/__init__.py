"""ControlledShutdown version 3 (generated)."""
from .request import ControlledShutdownRequest
from .response import ControlledShutdownResponse

__all__ = ("ControlledShutdownRequest", "ControlledShutdownResponse")

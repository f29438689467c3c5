"""CreateDelegationToken version 0 (generated)."""
from .request import CreateDelegationTokenRequest
from .response import CreateDelegationTokenResponse

__all__ = ("CreateDelegationTokenRequest", "CreateDelegationTokenResponse")

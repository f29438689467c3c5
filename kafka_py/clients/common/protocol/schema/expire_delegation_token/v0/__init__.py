"""ExpireDelegationToken version 0 (generated)."""
from .request import ExpireDelegationTokenRequest
from .response import ExpireDelegationTokenResponse

__all__ = ("ExpireDelegationTokenRequest", "ExpireDelegationTokenResponse")

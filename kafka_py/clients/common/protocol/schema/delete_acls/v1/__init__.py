"""DeleteAcls version 1 (generated)."""
from .request import DeleteAclsRequest
from .response import DeleteAclsResponse

__all__ = ("DeleteAclsRequest", "DeleteAclsResponse")

"""DeleteAcls version 2 (generated)."""
from .request import DeleteAclsRequest
from .response import DeleteAclsResponse

__all__ = ("DeleteAclsRequest", "DeleteAclsResponse")

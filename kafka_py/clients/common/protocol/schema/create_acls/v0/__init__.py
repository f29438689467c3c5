"""CreateAcls version 0 (generated)."""
from .request import CreateAclsRequest
from .response import CreateAclsResponse

__all__ = ("CreateAclsRequest", "CreateAclsResponse")

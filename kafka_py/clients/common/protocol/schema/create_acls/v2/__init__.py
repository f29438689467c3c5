"""CreateAcls version 2 (generated)."""
from .request import CreateAclsRequest
from .response import CreateAclsResponse

__all__ = ("CreateAclsRequest", "CreateAclsResponse")

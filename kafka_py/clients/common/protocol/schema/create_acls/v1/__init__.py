"""CreateAcls version 1 (generated)."""
from .request import CreateAclsRequest
from .response import CreateAclsResponse

__all__ = ("CreateAclsRequest", "CreateAclsResponse")

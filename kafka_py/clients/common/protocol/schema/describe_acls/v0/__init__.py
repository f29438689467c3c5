"""DescribeAcls version 0 (generated)."""
from .request import DescribeAclsRequest
from .response import DescribeAclsResponse

__all__ = ("DescribeAclsRequest", "DescribeAclsResponse")

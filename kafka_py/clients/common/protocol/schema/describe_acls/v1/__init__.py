"""DescribeAcls version 1 (generated)."""
from .request import DescribeAclsRequest
from .response import DescribeAclsResponse

__all__ = ("DescribeAclsRequest", "DescribeAclsResponse")

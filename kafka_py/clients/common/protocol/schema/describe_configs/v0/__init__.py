"""DescribeConfigs version 0 (generated)."""
from .request import DescribeConfigsRequest
from .response import DescribeConfigsResponse

__all__ = ("DescribeConfigsRequest", "DescribeConfigsResponse")

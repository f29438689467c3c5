"""DescribeLogDirs version 0 (generated)."""
from .request import DescribeLogDirsRequest
from .response import DescribeLogDirsResponse

__all__ = ("DescribeLogDirsRequest", "DescribeLogDirsResponse")

"""DescribeLogDirs version 2 (generated)."""
from .request import DescribeLogDirsRequest
from .response import DescribeLogDirsResponse

__all__ = ("DescribeLogDirsRequest", "DescribeLogDirsResponse")

"""DescribeLogDirs version 1 (generated)."""
from .request import DescribeLogDirsRequest
from .response import DescribeLogDirsResponse

__all__ = ("DescribeLogDirsRequest", "DescribeLogDirsResponse")

"""DescribeLogDirs messages, one module per version (generated)."""

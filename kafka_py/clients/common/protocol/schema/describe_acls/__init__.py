"""DescribeAcls messages, one module per version (generated)."""

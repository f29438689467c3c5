"""DescribeConfigs messages, one module per version (generated)."""

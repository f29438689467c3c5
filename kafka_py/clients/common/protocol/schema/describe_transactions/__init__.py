"""DescribeTransactions messages, one module per version (generated)."""

"""DescribeDelegationToken messages, one module per version (generated)."""

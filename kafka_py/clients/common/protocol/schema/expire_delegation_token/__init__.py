"""ExpireDelegationToken messages, one module per version (generated)."""

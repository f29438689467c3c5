"""CreateDelegationToken messages, one module per version (generated)."""

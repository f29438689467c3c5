"""RenewDelegationToken messages, one module per version (generated)."""

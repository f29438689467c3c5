"""StopReplica messages, one module per version (generated)."""

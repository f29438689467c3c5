"""DeleteAcls messages, one module per version (generated)."""

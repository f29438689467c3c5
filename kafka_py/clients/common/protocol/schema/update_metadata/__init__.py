"""UpdateMetadata messages, one module per version (generated)."""

"""CreateAcls messages, one module per version (generated)."""

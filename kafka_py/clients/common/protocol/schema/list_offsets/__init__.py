"""ListOffsets messages, one module per version (generated)."""

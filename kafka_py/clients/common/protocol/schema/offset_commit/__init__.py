"""OffsetCommit messages, one module per version (generated)."""

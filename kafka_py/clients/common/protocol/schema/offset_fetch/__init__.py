"""OffsetFetch messages, one module per version (generated)."""

"""OffsetForLeaderEpoch messages, one module per version (generated)."""

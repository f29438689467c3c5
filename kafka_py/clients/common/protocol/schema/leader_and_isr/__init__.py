"""LeaderAndIsr messages, one module per version (generated)."""

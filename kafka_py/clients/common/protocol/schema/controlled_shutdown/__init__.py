"""ControlledShutdown messages, one module per version (generated)."""

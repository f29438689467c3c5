"""WriteTxnMarkers messages, one module per version (generated)."""

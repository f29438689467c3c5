"""AlterIsr messages, one module per version (generated)."""

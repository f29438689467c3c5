"""Produce messages, one module per version (generated)."""

"""Fetch messages, one module per version (generated)."""

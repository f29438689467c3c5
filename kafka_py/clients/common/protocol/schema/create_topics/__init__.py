"""CreateTopics messages, one module per version (generated)."""

"""DeleteTopics messages, one module per version (generated)."""

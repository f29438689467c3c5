"""AlterReplicaLogDirs messages, one module per version (generated)."""

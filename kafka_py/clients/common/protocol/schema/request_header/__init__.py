"""Request header versions kio does not model (only version 0)."""

"""Port of core/src/main/scala/kafka/coordinator: the group coordinator (``group``)."""

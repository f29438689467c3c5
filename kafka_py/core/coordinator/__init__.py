"""Port of core/src/main/scala/kafka/coordinator: the group coordinator (``group``) and the
transaction coordinator (``transaction``)."""

"""Port of core/src/main/scala/kafka/coordinator/transaction: the transaction coordinator, its
store of transactional ids over __transaction_state, the marker sender and the producer id
manager."""

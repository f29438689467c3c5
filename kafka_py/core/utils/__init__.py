"""core/src/main/scala/kafka/utils: the scheduler, timers, JSON, logging and the other helpers
of Kafka's core, and the stand-ins for the JVM facilities they rest on (an atomic integer, a
read-write lock, Java's integer limits, thread dumps)."""

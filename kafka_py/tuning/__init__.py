"""Broker tuning: kafka-py's performance machinery that has no counterpart in Kafka's source.

Everything here exists because the broker is CPython (one interpreter lock, a generic
protocol writer that costs more than the request it answers) and none of it changes what
a client sees. The ported classes (Log, FileRecords, LogManager, KafkaServer, KafkaApis,
the replica fetcher) each reach it through at most one line, so they read as Kafka's do.

* ``fast_paths``: hand-written writers for the Produce, Fetch and Metadata answers and for
  the replica fetcher's Fetch request and answer, giving the same bytes as the generic
  (kio) codec;
* ``cpu_affinity`` and ``sched_policy``: the broker process pinned to one CPU and put
  under SCHED_BATCH, both off unless the environment turns them on
  (``KAFKA_PY_CPU_AFFINITY``, ``KAFKA_PY_SCHED_POLICY``; docs/operations.md);
* ``page_cache_prefaulter``: the page cache filled ahead of the appends of preallocated
  active segments.

docs/performance.md, "Broker tuning", says what each piece buys, with the command that
measures it.
"""

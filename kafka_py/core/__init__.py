"""Kafka's ``core`` module (core/src/main/scala/kafka), the packages of it that are not
at the top of the repository.

``network``, ``log``, ``server`` and ``controller`` sit at the top of the tree and are
installed as ``kafka_py.network`` ... (setup.py); the rest of ``core`` is here, each folder
named by its Kafka package: ``kafka.cluster`` is ``kafka_py.core.cluster``, ``kafka.admin``
is ``kafka_py.core.admin``, and ``kafka/Kafka.scala`` is ``kafka_py/core/kafka.py``."""

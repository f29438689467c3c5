"""The project's own commands, with no counterpart in Kafka's source: the console scripts
that ``pip install`` puts on PATH (the repository's bin/ scripts for a pip user), the
checks bin/kafka-quickstart.sh makes, and the reading guide's generator."""

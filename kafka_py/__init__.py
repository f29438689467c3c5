"""kafka-py: Kafka 2.8.2's broker in Python (the package's own start-up only; every module
names the Kafka file it ports)."""
import sys as _sys

# kio, the library whose message classes the protocol code uses, registers a hypothesis
# strategy for each of its primitive types whenever hypothesis can be imported: about a second
# of CPU at every start of a process that imports it. A broker or a tool started as
# ``python -m kafka_py.<module>`` (bin/*.sh, kafka_py.testing, the test suite's harness) has no
# use for them, so there hypothesis is made unimportable before anything imports kio; where
# hypothesis is not installed, as in a broker's own environment, this changes nothing.
_argv = getattr(_sys, "orig_argv", ())
if "-m" in _argv[:-1] and _argv[_argv.index("-m") + 1].startswith("kafka_py."):
    _sys.modules.setdefault("hypothesis", None)  # type: ignore[arg-type]
del _argv

"""Packaging for kafka-py.

The four folders that port Kafka's ``core`` packages (network, log, server,
controller) live at the top of the repository, as in Kafka's source tree, but
are installed *inside* the ``kafka_py`` namespace: ``kafka_py.log``,
``kafka_py.server`` ... so nothing called ``log`` or ``server`` ever lands at
the top of site-packages.
"""
import os

from setuptools import Extension, find_packages, setup

PORTED_PACKAGES = ("network", "log", "server", "controller")

packages = find_packages(include=["kafka_py", "kafka_py.*"])
package_dir = {"kafka_py": "kafka_py"}
for top in PORTED_PACKAGES:
    package_dir[f"kafka_py.{top}"] = top
    packages.append(f"kafka_py.{top}")
    for sub in find_packages(where=top):
        packages.append(f"kafka_py.{top}.{sub}")
        package_dir[f"kafka_py.{top}.{sub}"] = f"{top}/{sub.replace('.', '/')}"

# setuptools writes its egg-info metadata beside setup.py unless told otherwise. When the
# tree has the .venv bin/kafka-env.sh makes, the metadata goes in there, so the top of the
# tree keeps the layout of docs/design.md; without one it stays beside setup.py (.gitignore
# lists it). Installing never creates .venv: bin/kafka-env.sh does, with python3 -m venv.
HERE = os.path.dirname(os.path.abspath(__file__))
options = {"egg_info": {"egg_base": ".venv"}} if os.path.isdir(os.path.join(HERE, ".venv")) else {}

# The produce path walks every record of every batch; this is that walk in C
# (kafka_py/record/partial_default_record.py keeps the Python one and falls back to it).
record_walk = Extension("kafka_py.record._partial_default_record",
                        sources=["kafka_py/record/_partial_default_record.c"], optional=True)

setup(packages=packages, package_dir=package_dir, ext_modules=[record_walk], options=options)

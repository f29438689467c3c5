"""Packaging for kafka-py.

The four folders that port Kafka's ``core`` packages (network, log, server,
controller) live at the top of the repository, as in Kafka's source tree, but
are installed *inside* the ``kafka_py`` namespace: ``kafka_py.log``,
``kafka_py.server`` ... so nothing called ``log`` or ``server`` ever lands at
the top of site-packages.
"""
from setuptools import find_packages, setup

PORTED_PACKAGES = ("network", "log", "server", "controller")

packages = find_packages(include=["kafka_py", "kafka_py.*"])
package_dir = {"kafka_py": "kafka_py"}
for top in PORTED_PACKAGES:
    package_dir[f"kafka_py.{top}"] = top
    packages.append(f"kafka_py.{top}")
    for sub in find_packages(where=top):
        packages.append(f"kafka_py.{top}.{sub}")
        package_dir[f"kafka_py.{top}.{sub}"] = f"{top}/{sub.replace('.', '/')}"

setup(packages=packages, package_dir=package_dir)

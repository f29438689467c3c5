"""Packaging for kafka-py.

The four folders that port Kafka's ``core`` packages (network, log, server,
controller) live at the top of the repository, as in Kafka's source tree, but
are installed *inside* the ``kafka_py`` namespace: ``kafka_py.log``,
``kafka_py.server`` ... so nothing called ``log`` or ``server`` ever lands at
the top of site-packages.
"""
import os

from setuptools import Extension, find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

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
# (kafka_py/clients/common/record/partial_default_record.py keeps the Python one and falls back to it).
record_walk = Extension("kafka_py.clients.common.record._partial_default_record",
                        sources=["kafka_py/clients/common/record/_partial_default_record.c"], optional=True)
# Fetch v0-v3 convert every record they read to message format 0 or 1; this is that step in C
# (kafka_py/clients/common/record/records_util.py keeps the Python one and falls back to it).
down_conversion = Extension("kafka_py.clients.common.record._records_util",
                            sources=["kafka_py/clients/common/record/_records_util.c"], optional=True)
# Every produce request is read on the request path; this is the reader of Produce v3-v8 in C
# (kafka_py/clients/common/protocol/fast_produce_request.py keeps the Python one and falls back to it).
produce_request_reader = Extension("kafka_py.clients.common.protocol._fast_produce_request",
                                   sources=["kafka_py/clients/common/protocol/_fast_produce_request.c"], optional=True)
# Every request's header is parsed; this is the common case of RequestHeader.parse in C
# (kafka_py/clients/common/protocol/headers.py keeps the Python parse and falls back to it).
request_header = Extension("kafka_py.clients.common.protocol._headers",
                           sources=["kafka_py/clients/common/protocol/_headers.c"], optional=True)
# ... and every produce request is answered; this is the answer's writer in C
# (kafka_py/clients/common/protocol/fast_produce_response.py keeps the Python one and falls back to it).
produce_response_writer = Extension("kafka_py.clients.common.protocol._fast_produce_response",
                                    sources=["kafka_py/clients/common/protocol/_fast_produce_response.c"], optional=True)


class BuildPyWithConfigs(build_py):
    """Puts a copy of config/ (server.properties, kraft/, logging.yaml...) inside the built
    kafka_py.config package, so an installed kafka-py has its configs without the source
    tree (kafka_py/config/__init__.py finds them there, or in config/ in a checkout)."""

    def run(self):
        super().run()
        source = os.path.join(HERE, "config")
        target = os.path.join(self.build_lib, "kafka_py", "config")
        for folder, _dirs, files in os.walk(source):
            for name in files:
                relative = os.path.relpath(os.path.join(folder, name), source)
                os.makedirs(os.path.dirname(os.path.join(target, relative)), exist_ok=True)
                self.copy_file(os.path.join(folder, name), os.path.join(target, relative))


class SdistWithConfigs(sdist):
    """The sdist carries config/ too, for the wheel built from it (without a MANIFEST.in,
    which would be one more file at the top of the tree)."""

    def make_release_tree(self, base_dir, files):
        super().make_release_tree(base_dir, files)
        self.copy_tree(os.path.join(HERE, "config"), os.path.join(base_dir, "config"))


setup(packages=packages, package_dir=package_dir, ext_modules=[record_walk, down_conversion, produce_request_reader,
                                                                    produce_response_writer, request_header],
      options=options,
      cmdclass={"build_py": BuildPyWithConfigs, "sdist": SdistWithConfigs})

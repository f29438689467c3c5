"""Coverage-guided fuzzing (atheris) of everything in the broker that parses outside input.

One target per parser family, a module ``fuzz_<name>.py`` with ``one_input(data)`` and
``seeds()``; seed corpora under ``corpus/<name>/``. docs/fuzzing.md describes them.
"""

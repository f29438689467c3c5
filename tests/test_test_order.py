"""The order bin/run-tests.sh hands test files to its workers in (tests/conftest.py)."""
import pathlib

from tests.conftest import LONGEST_FILES

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_file_named_longest_exists_once():
    assert len(set(LONGEST_FILES)) == len(LONGEST_FILES)
    missing = [path for path in LONGEST_FILES if not (ROOT / path).is_file()]
    assert missing == [], "renamed or removed: update LONGEST_FILES in tests/conftest.py"


def test_the_workers_take_files_in_collection_order():
    script = (ROOT / "bin" / "run-tests.sh").read_text()
    assert "--dist loadfile --no-loadscope-reorder" in script


def test_the_longest_files_are_collected_first():
    from tests.conftest import pytest_collection_modifyitems

    class Item:
        def __init__(self, nodeid):
            self.nodeid = nodeid

    items = [Item("tests/a/test_x.py::t1"), Item(f"{LONGEST_FILES[1]}::t"), Item("tests/a/test_x.py::t2"),
             Item(f"{LONGEST_FILES[0]}::t[1]"), Item(f"{LONGEST_FILES[0]}::t[2]"), Item("tests/b/test_y.py::t")]
    pytest_collection_modifyitems(None, items)
    assert [i.nodeid for i in items] == [
        f"{LONGEST_FILES[0]}::t[1]", f"{LONGEST_FILES[0]}::t[2]", f"{LONGEST_FILES[1]}::t",
        "tests/a/test_x.py::t1", "tests/a/test_x.py::t2", "tests/b/test_y.py::t"]

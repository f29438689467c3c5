"""The reading guide's module table is generated from docstrings and must be current."""
import pathlib

from kafka_py.bin import reading_guide

ROOT = pathlib.Path(__file__).resolve().parents[1]


def test_every_module_names_its_kafka_counterpart_or_says_what_it_is():
    missing = [str(p.relative_to(ROOT)) for p in reading_guide.module_files()
               if not reading_guide.first_line(p)]
    assert missing == [], f"modules without a docstring: {missing}"


def test_docs_table_is_current():
    guide = (ROOT / "docs" / "README.md").read_text()
    assert reading_guide.render(guide) == guide, (
        "docs/README.md module table is stale: run "
        "`.venv/bin/python -m kafka_py.bin.reading_guide --write`"
    )

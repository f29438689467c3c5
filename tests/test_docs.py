"""The reading guide's chapters name our code; this keeps the names true.

The chapters in docs/ walk through code paths by naming modules
(``log/log_segment.py``), methods (``LogSegment.append``, ``log_files.log_file``),
scripts (``bin/kafka-dump-log.sh``) and config files. A rename that the chapters
do not follow would leave a reader searching for something that is not there, so
every such name is resolved here against the repository:

* a ``*.py`` path anywhere in a chapter must be a file of the repository;
* ``Class.member`` in inline code or a code block must be a class of ours with
  that method, property or attribute (its own or inherited). Kafka's Scala and
  Java names are camelCase (``Log.appendAsLeader``) or file names
  (``Log.scala``); those are not ours and are left alone;
* ``module.function`` in inline code or a code block, where ``module`` is the
  file name of one of our modules (one with an underscore in it, so that config
  keys like ``log.dirs`` are not taken for code) and not a standard library
  module, must be defined at the top level of that module;
* every ``bin/*.sh`` and ``config/*`` file named must exist, and every link to
  another chapter must resolve.
"""
from __future__ import annotations

import ast
import functools
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
CHAPTERS = (
    "log.md",
    "request-lifecycle.md",
    "produce-path.md",
    "fetch-path.md",
    "controller.md",
    "operations.md",
    "log-cleaner.md",
    "group-coordinator.md",
    "spark.md",
    "replication.md",
    "design.md",
    "quotas.md",
    "kraft.md",
    "fuzzing.md",
    "testing.md",
)
PACKAGES = ("network", "log", "server", "controller", "kafka_py")

_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
_INLINE = re.compile(r"`([^`\n]+)`")
_MODULE_PATH = re.compile(r"(?<![\w./-])((?:[A-Za-z_][\w-]*/)+\w+\.py)(?![\w/])")
_BIN_SCRIPT = re.compile(r"(?<![\w./-])(bin/[\w.-]+\.sh)(?![\w.-])")
_CONFIG_FILE = re.compile(r"(?<![\w./-])(config/[\w.-]+\.(?:properties|yaml))(?![\w.-])")
_CHAPTER_LINK = re.compile(r"\]\(([^)#\s:]*\.md|)(?:#([^)\s]*))?\)")
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
# A capitalised name, a dot, a snake_case name not followed by more identifier (so
# camelCase Kafka names never match) and not preceded by a dot (so ``a.b.Class.x``,
# a dotted import path, is not mistaken for a member reference).
_CLASS_MEMBER = re.compile(r"(?<![\w.])(_?[A-Z][A-Za-z0-9]*)\.([a-z_][a-z0-9_]*)(?![\w])")
# Only module names with an underscore (``log_files.log_file``): one-word names such as
# ``log`` or ``broker`` would catch config keys (``log.dirs``, ``broker.id``), which
# never contain one.
_MODULE_MEMBER = re.compile(r"(?<![\w.])([a-z][a-z0-9]*_[a-z0-9_]*)\.([A-Za-z_][A-Za-z0-9_]*)(?![\w.])")
# Kafka file names written as ``Log.scala`` look like ``Class.member``.
_FILE_EXTENSIONS = {"scala", "java", "py", "md", "json", "yaml", "yml", "properties", "sh", "txt", "jar"}


# ---------------------------------------------------------------------------- the code


def _source_files() -> list[pathlib.Path]:
    files = []
    for top in PACKAGES:
        files.extend(p for p in sorted((ROOT / top).rglob("*.py")) if "__pycache__" not in p.parts)
    return files


def _self_attributes(node: ast.AST) -> set[str]:
    """Names assigned as ``self.<name>`` anywhere under ``node``."""
    names = set()
    for sub in ast.walk(node):
        targets: list[ast.AST] = []
        if isinstance(sub, ast.Assign):
            targets = list(sub.targets)
        elif isinstance(sub, (ast.AnnAssign, ast.AugAssign)):
            targets = [sub.target]
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    names.add(t.attr)
    return names


def _class_members(cls: ast.ClassDef) -> set[str]:
    members = set()
    for item in cls.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            members.add(item.name)
        elif isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name):
                    members.add(target.id)
                    if target.id == "__slots__" and isinstance(item.value, (ast.Tuple, ast.List)):
                        members.update(e.value for e in item.value.elts
                                       if isinstance(e, ast.Constant) and isinstance(e.value, str))
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            members.add(item.target.id)
    return members | _self_attributes(cls)


def _base_names(cls: ast.ClassDef) -> list[str]:
    names = []
    for base in cls.bases:
        if isinstance(base, ast.Name):
            names.append(base.id)
        elif isinstance(base, ast.Attribute):
            names.append(base.attr)
        elif isinstance(base, ast.Subscript) and isinstance(base.value, ast.Name):
            names.append(base.value.id)  # Generic[T]
    return names


@functools.cache
def _code_index() -> tuple[dict[str, list[tuple[set[str], list[str]]]], dict[str, list[set[str]]]]:
    """(class name -> [(members, base names)], module file stem -> [top-level names])."""
    classes: dict[str, list[tuple[set[str], list[str]]]] = {}
    modules: dict[str, list[set[str]]] = {}
    for path in _source_files():
        tree = ast.parse(path.read_text(), str(path))
        top_level = set()
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                top_level.add(node.name)
            elif isinstance(node, ast.Assign):
                top_level.update(t.id for t in node.targets if isinstance(t, ast.Name))
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                top_level.add(node.target.id)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                top_level.update((a.asname or a.name).split(".")[0] for a in node.names)
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes.setdefault(node.name, []).append((_class_members(node), _base_names(node)))
        is_package = path.name == "__init__.py"
        stem = path.parent.name if is_package else path.stem
        modules.setdefault(stem, []).append(top_level)
        # A module is also a member of its package (``kafka_py.core.kafka``, ``log_config.LogConfig``).
        parent = (path.parent.parent if is_package else path.parent)
        if parent != ROOT:
            modules.setdefault(parent.name, []).append({stem})
    # setup.py installs the four top-level folders inside the kafka_py package.
    modules.setdefault("kafka_py", []).append({"network", "log", "server", "controller"})
    return classes, modules


def _has_member(class_name: str, member: str, seen: frozenset[str] = frozenset()) -> bool:
    classes, _ = _code_index()
    for members, bases in classes.get(class_name, ()):
        if member in members:
            return True
        for base in bases:
            if base not in seen and _has_member(base, member, seen | {class_name}):
                return True
    return False


# ---------------------------------------------------------------------------- the chapters


def _text(chapter: str) -> str:
    return (DOCS / chapter).read_text()


def _code_spans(text: str) -> list[str]:
    """Inline code and the bodies of fenced code blocks."""
    spans = _FENCED.findall(text)
    spans.extend(_INLINE.findall(_FENCED.sub("", text)))
    return spans


def _class_member_refs(text: str) -> set[tuple[str, str]]:
    return {(c, m) for span in _code_spans(text) for c, m in _CLASS_MEMBER.findall(span)
            if m not in _FILE_EXTENSIONS}


def _module_member_refs(text: str) -> set[tuple[str, str]]:
    _, modules = _code_index()
    stdlib = set(sys.stdlib_module_names)
    return {(mod, name) for span in _code_spans(text) for mod, name in _MODULE_MEMBER.findall(span)
            if mod in modules and mod not in stdlib and name not in _FILE_EXTENSIONS}


@pytest.fixture(params=CHAPTERS)
def chapter(request: pytest.FixtureRequest) -> str:
    return request.param


def test_chapter_exists_and_is_linked_from_the_guide(chapter: str) -> None:
    assert (DOCS / chapter).is_file(), f"docs/{chapter} is missing"
    guide = (DOCS / "README.md").read_text()
    chapters_list = guide.split("## Chapters", 1)[1].split("\n## ", 1)[0]
    assert f"]({chapter})" in chapters_list, f"docs/README.md's Chapters list does not link {chapter}"


def test_cited_module_paths_exist(chapter: str) -> None:
    paths = set(_MODULE_PATH.findall(_text(chapter)))
    assert paths, f"{chapter} cites no module at all: is the pattern still right?"
    missing = sorted(p for p in paths if not (ROOT / p).is_file())
    assert missing == [], f"{chapter} cites modules that do not exist: {missing}"


def test_cited_class_members_exist(chapter: str) -> None:
    refs = _class_member_refs(_text(chapter))
    classes, _ = _code_index()
    unknown_classes = sorted({c for c, _ in refs if c not in classes})
    assert unknown_classes == [], f"{chapter} cites classes that do not exist: {unknown_classes}"
    missing = sorted(f"{c}.{m}" for c, m in refs if not _has_member(c, m))
    assert missing == [], f"{chapter} cites members that do not exist: {missing}"


def test_cited_module_functions_exist(chapter: str) -> None:
    _, modules = _code_index()
    missing = sorted(f"{mod}.{name}" for mod, name in _module_member_refs(_text(chapter))
                     if not any(name in names for names in modules[mod]))
    assert missing == [], f"{chapter} cites module members that do not exist: {missing}"


def test_cited_scripts_and_config_files_exist(chapter: str) -> None:
    text = _text(chapter)
    files = set(_BIN_SCRIPT.findall(text)) | set(_CONFIG_FILE.findall(text))
    missing = sorted(f for f in files if not (ROOT / f).is_file())
    assert missing == [], f"{chapter} names files that do not exist: {missing}"


def _anchors(markdown: str) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-")
            for h in _HEADING.findall(_FENCED.sub("", markdown))}


def test_links_between_chapters_resolve(chapter: str) -> None:
    missing = []
    for page, anchor in set(_CHAPTER_LINK.findall(_text(chapter))):
        target = DOCS / (page or chapter)
        if not target.is_file():
            missing.append(page)
        elif anchor and anchor not in _anchors(target.read_text()):
            missing.append(f"{page or chapter}#{anchor}")
    assert sorted(missing) == [], f"{chapter} links to missing pages or sections: {sorted(missing)}"


def test_the_chapters_are_checked_at_all() -> None:
    """If the patterns stopped matching, every test above would pass on nothing."""
    texts = [_text(c) for c in CHAPTERS]
    assert sum(len(_class_member_refs(t)) for t in texts) >= 100
    assert sum(len(set(_MODULE_PATH.findall(t))) for t in texts) >= 30
    assert sum(len(_module_member_refs(t)) for t in texts) >= 1
    assert sum(len(set(_BIN_SCRIPT.findall(t))) for t in texts) >= 8


def test_operations_chapter_names_every_start_and_stop_script() -> None:
    text = _text("operations.md")
    for script in ("bin/kafka-quickstart.sh", "bin/zookeeper-server-start.sh", "bin/zookeeper-server-stop.sh",
                   "bin/kafka-server-start.sh", "bin/kafka-server-stop.sh", "bin/kafka-dump-log.sh"):
        assert script in text, f"operations.md does not mention {script}"


# ---------------------------------------------------------------------------- the checker itself


def test_checker_rejects_names_that_do_not_exist() -> None:
    """A check that passes on anything proves nothing: made-up names must be caught."""
    text = ("See `log/no_such_module.py`, `Log.no_such_method`, `LogSegment.append`, "
            "`Log.appendAsLeader` (Kafka's), `Log.scala`, and\n```\nLog.read -> LogSegment.made_up\n```\n")
    assert set(_MODULE_PATH.findall(text)) == {"log/no_such_module.py"}
    refs = _class_member_refs(text)
    assert refs == {("Log", "no_such_method"), ("LogSegment", "append"), ("Log", "read"),
                    ("LogSegment", "made_up")}
    assert not _has_member("Log", "no_such_method")
    assert not _has_member("LogSegment", "made_up")
    assert _has_member("LogSegment", "append")
    assert _has_member("Log", "read")


def test_checker_sees_inherited_and_instance_attributes() -> None:
    # ZkPartitionStateMachine inherits this from PartitionStateMachine.
    assert _has_member("ZkPartitionStateMachine", "trigger_online_partition_state_change")
    # Set in Log.__init__, not at class level.
    assert _has_member("Log", "recovery_point")
    # A property.
    assert _has_member("Log", "log_end_offset")


def test_checker_rejects_links_to_missing_sections() -> None:
    assert "how-an-append-travels" in _anchors(_text("log.md"))
    assert "a-three-broker-cluster-on-one-machine" in _anchors(_text("operations.md"))
    assert "no-such-section" not in _anchors(_text("log.md"))
    links = set(_CHAPTER_LINK.findall("[a](log.md#x) [b](#y) [c](https://example.com/z.md)"))
    assert links == {("log.md", "x"), ("", "y")}

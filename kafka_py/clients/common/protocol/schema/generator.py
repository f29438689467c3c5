"""Port of generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java, cut down.

Kafka generates its message classes from the JSON specs in
clients/src/main/resources/common/message/. kio does the same for Python, but its
specs come from a Kafka release without the ZooKeeper-era inter-broker APIs (and
without OffsetForLeaderEpoch's versions 0 and 1, the ACL APIs' version 0, WriteTxnMarkers'
version 0, and AlterReplicaLogDirs' and DescribeLogDirs' version 0; DescribeTransactions, Kafka 3.0's,
whose start time kio types as a timestamp that cannot be -1). This script fills that gap: it reads Kafka 2.8.2's specs for LeaderAndIsr, StopReplica,
UpdateMetadata, ControlledShutdown, AlterIsr, OffsetForLeaderEpoch, DescribeAcls, CreateAcls,
DeleteAcls, WriteTxnMarkers, AlterReplicaLogDirs and DescribeLogDirs (and Kafka 3.0.0's for
DescribeTransactions) and writes one module per API version, in
kio's dataclass style (frozen dataclasses whose fields carry ``kafka_type``
metadata), so kio's entity writers and kafka_py.clients.common.protocol.codec read and write them
like any kio message. The specs of these thirteen APIs have no tagged fields, and the
generator refuses any.

kio also starts several client APIs above 2.8.2's oldest version (``KIO_MISSING_VERSIONS``:
Produce below v3, Fetch below v4, ListOffsets v0, ...). Those versions are generated here
too, and only those; each field is named and typed as kio's oldest class of the same
message has it (kio writes ``TimeoutMs`` as ``timeout``, a ``timedelta``), so that one
handler object converts to any version by field name (kafka_py.clients.common.protocol.entities). Its ModuleWriter also renders the metadata records
(kafka_py.metadata.records.generator), which do have tagged fields and which it writes
with explicit defaults.

Usage, from a Kafka 2.8.2 checkout::

    python -m kafka_py.clients.common.protocol.schema.generator \\
        --spec-dir kafka/clients/src/main/resources/common/message

with DescribeTransactionsRequest.json and DescribeTransactionsResponse.json of Kafka 3.0.0
copied into that directory.

The generated modules are checked in; rerun only when the message set changes.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import logging
import re
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ClassVar

logger = logging.getLogger(__name__)

GENERATED_APIS = (
    "LeaderAndIsr",
    "StopReplica",
    "UpdateMetadata",
    "ControlledShutdown",
    "AlterIsr",
    "OffsetForLeaderEpoch",
    "DescribeAcls",
    "CreateAcls",
    "DeleteAcls",
    "WriteTxnMarkers",
    "AlterReplicaLogDirs",
    "DescribeLogDirs",
    # Kafka 3.0's, served for transaction verification: kio's class types TransactionStartTimeMs
    # as a timestamp and refuses the -1 Kafka writes for an id with no transaction
    "DescribeTransactions",
)

# API -> the versions of 2.8.2 that kio has no classes for; the generator writes those only.
KIO_MISSING_VERSIONS = {
    "Produce": range(0, 3),
    "Fetch": range(0, 4),
    "ListOffsets": range(0, 1),
    "OffsetCommit": range(0, 2),
    "OffsetFetch": range(0, 1),
    "CreateTopics": range(0, 2),
    "DeleteTopics": range(0, 1),
    "DescribeConfigs": range(0, 1),
    "CreateDelegationToken": range(0, 1),
    "RenewDelegationToken": range(0, 1),
    "ExpireDelegationToken": range(0, 1),
    "DescribeDelegationToken": range(0, 1),
}

# Names a later Kafka gave to 2.8.2's structs and fields, which kio uses: the old versions
# generated here use them too ("Struct" for a struct, "Struct.field" for a field).
KIO_NAMES = {
    "FetchResponse": {
        "FetchablePartitionResponse": "PartitionData",
        "FetchableTopicResponse.partition_responses": "partitions",
        "FetchablePartitionResponse.partition": "partition_index",
        "FetchablePartitionResponse.record_set": "records",
    },
    "OffsetCommitRequest": {"OffsetCommitRequest.generation_id": "generation_id_or_member_epoch"},
    "CreateTopicsRequest": {"CreateableTopicConfig": "CreatableTopicConfig"},
}

# kio's kafka types with no plain JSON twin: the annotation they get and the default's spelling.
_KIO_TIME_TYPES = {
    "timedelta_i32": "i32Timedelta",
    "timedelta_i64": "i64Timedelta",
    "datetime_i64": "TZAware",
}

# The Kafka release of each spec, when not 2.8.2 (put that release's spec in --spec-dir).
SPEC_RELEASES = {"DescribeTransactions": "3.0.0"}

SCHEMA_ROOT = Path(__file__).resolve().parent

# JSON primitive type -> (python type, kio kafka_type, module the type comes from)
_PRIMITIVES = {
    "bool": ("bool", "bool", None),
    "int8": ("i8", "int8", "kio.static.primitive"),
    "int16": ("i16", "int16", "kio.static.primitive"),
    "int32": ("i32", "int32", "kio.static.primitive"),
    "int64": ("i64", "int64", "kio.static.primitive"),
    "uint16": ("u16", "uint16", "kio.static.primitive"),
    "float64": ("f64", "float64", "kio.static.primitive"),
    "string": ("str", "string", None),
    "bytes": ("bytes", "bytes", None),
    "records": ("Records", "records", "kio.static.primitive"),
    "uuid": ("uuid.UUID", "uuid", None),
}

# Kafka's entityType annotations map to kio's nominal types.
_ENTITY_TYPES = {
    "brokerId": "BrokerId",
    "topicName": "TopicName",
    "groupId": "GroupId",
    "transactionalId": "TransactionalId",
    "producerId": "ProducerId",
}


def strip_comments(text: str) -> str:
    """Kafka's specs are JSON with // line comments; drop them outside strings."""
    out = []
    for line in text.splitlines():
        in_string = False
        cut = len(line)
        for i, ch in enumerate(line):
            if ch == '"' and (i == 0 or line[i - 1] != "\\"):
                in_string = not in_string
            elif not in_string and line.startswith("//", i):
                cut = i
                break
        out.append(line[:cut])
    return "\n".join(out)


def load_spec(path: Path) -> dict:
    # raw_decode: some 2.8.2 specs carry stray closing brackets that Jackson ignores.
    spec, _ = json.JSONDecoder().raw_decode(strip_comments(path.read_text()).strip())
    return spec


@dataclass(frozen=True)
class Versions:
    """A spec version range such as "0+", "1-3", "5" or "none"."""

    low: int
    high: int  # inclusive; a large number for open ranges

    @classmethod
    def parse(cls, text: str | None) -> Versions:
        if text is None or text == "none":
            return cls(1, 0)
        if text.endswith("+"):
            return cls(int(text[:-1]), 1 << 15)
        if "-" in text:
            low, high = text.split("-")
            return cls(int(low), int(high))
        return cls(int(text), int(text))

    def __contains__(self, version: int) -> bool:
        return self.low <= version <= self.high


def snake_case(name: str) -> str:
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name)
    name = re.sub(r"(?<=[A-Z])(?=[A-Z][a-z])", "_", name)
    return name.lower()


class ModuleWriter:
    """Renders the classes of one message version into one module's source.

    Subclasses (kafka_py.metadata.records.generator's, for metadata records) change where a
    class says it comes from and which class variables it carries, through ``source_lines``
    and ``class_vars``.
    """

    # Whether specs may have tagged fields (KIP-482). The request and response specs
    # generated here have none; a new one with them is refused, to be checked against
    # kio's class for the same API before its defaults are trusted.
    tagged_fields: ClassVar[bool] = False

    def __init__(self, spec: dict, version: int, twin: type | None = None) -> None:
        self.spec = spec
        self.version = version
        # struct name -> field name -> kio's field, from kio's class of another version
        self.twins: dict[str, dict[str, dataclasses.Field]] = {}
        self.renames: dict[str, str] = {}
        if twin is not None:
            _collect_twins(twin, self.twins)
            self.renames = KIO_NAMES.get(spec["name"], {})
        self.flexible = version in Versions.parse(spec.get("flexibleVersions"))
        self.is_request = spec["type"] == "request"
        self.common_structs = {s["name"]: s for s in spec.get("commonStructs", [])}
        self.classes: list[str] = []
        self.emitted: set[str] = set()
        self.imports: dict[str, set[str]] = {
            "dataclasses": {"dataclass", "field"},
            "typing": {"ClassVar"},
            "kio.static.constants": {"EntityType"},
            "kio.static.primitive": {"i16"},
        }
        self.plain_imports: set[str] = set()

    def header_schema(self) -> tuple[str, str]:
        if self.is_request:
            if self.spec["apiKey"] == 7 and self.version == 0:
                # ControlledShutdown v0 predates the client id in the request header.
                return "kafka_py.clients.common.protocol.schema.request_header.v0.header", "RequestHeader"
            header_version = 2 if self.flexible else 1
            return f"kio.schema.request_header.v{header_version}.header", "RequestHeader"
        header_version = 1 if self.flexible else 0
        return f"kio.schema.response_header.v{header_version}.header", "ResponseHeader"

    def source_lines(self) -> list[str]:
        """The module docstring's lines after the first: which program and spec made it."""
        return [
            f"Generated by kafka_py.clients.common.protocol.schema.generator from Kafka "
            f"{SPEC_RELEASES.get(self.spec['name'][:-len(self.spec['type'])], '2.8.2')}'s",
            f"clients/src/main/resources/common/message/{self.spec['name']}.json; do not edit.",
        ]

    def class_vars(self, entity_type: str) -> list[str]:
        """The ClassVar lines every generated class starts with, as kio writes them."""
        module, header = self.header_schema()
        self.imports.setdefault(module, set()).add(header)
        return [
            f"__type__: ClassVar = EntityType.{entity_type}",
            f"__version__: ClassVar[i16] = i16({self.version})",
            f"__flexible__: ClassVar[bool] = {self.flexible}",
            f"__api_key__: ClassVar[i16] = i16({self.spec['apiKey']})",
            f"__header_schema__: ClassVar[type[{header}]] = {header}",
        ]

    def render(self) -> str:
        self.render_struct(self.spec["name"], self.spec["fields"], self.spec["type"])
        lines = [
            f'"""{self.spec["name"]}, version {self.version}.',
            "",
            *self.source_lines(),
            '"""',
        ]
        stdlib = [f"import {name}" for name in sorted(self.plain_imports)]
        third_party = []
        for module_name in sorted(self.imports):
            group = stdlib if module_name in ("dataclasses", "typing") else third_party
            names = sorted(self.imports[module_name])
            group.extend(f"from {module_name} import {name}" for name in names)
        lines += ["", *stdlib, "", *third_party, ""]
        return "\n".join(lines) + "\n\n" + "\n\n\n".join(self.classes) + "\n"

    def struct_name(self, name: str) -> str:
        return self.renames.get(name, name)

    def render_struct(self, name: str, fields: list[dict], entity_type: str) -> None:
        if name in self.emitted:
            return
        self.emitted.add(name)
        body = []
        for f in fields:
            if self.version not in Versions.parse(f["versions"]):
                continue
            body.append(self.render_field(f, name))
        cls = [
            "@dataclass(frozen=True, slots=True, kw_only=True)",
            f"class {self.struct_name(name)}:",
            *(f"    {line}" for line in self.class_vars(entity_type)),
        ]
        cls.extend(f"    {line}" for line in body)
        # Nested classes must be defined before the class that refers to them.
        self.classes.append("\n".join(cls))

    def python_type(self, f: dict, json_type: str) -> tuple[str, str]:
        python_type, kafka_type, module = _PRIMITIVES[json_type]
        if module:
            self.imports.setdefault(module, set()).add(python_type)
        if json_type == "uuid":
            # kio reads the all-zero UUID (Kafka's Uuid.ZERO_UUID) as None.
            self.plain_imports.add("uuid")
            return "uuid.UUID | None", kafka_type
        entity = _ENTITY_TYPES.get(f.get("entityType", ""))
        if entity:
            self.imports.setdefault("kio.schema.types", set()).add(entity)
            python_type = entity
        if json_type == "int16" and f["name"].endswith("ErrorCode"):
            self.imports.setdefault("kio.schema.errors", set()).add("ErrorCode")
            return "ErrorCode", "error_code"
        return python_type, kafka_type

    def render_field(self, f: dict, struct: str = "") -> str:
        tagged = "tag" in f
        if tagged and not self.tagged_fields:
            raise NotImplementedError(f"tagged field {f['name']} in {self.spec['name']}")
        if tagged and self.version not in Versions.parse(f.get("taggedVersions")):
            raise NotImplementedError(f"field {f['name']} of {self.spec['name']} is tagged in "
                                      f"some versions only")
        name = snake_case(f["name"])
        name = self.renames.get(f"{struct}.{name}", name)
        json_type: str = f["type"]
        twin = self.twin_field(self.struct_name(struct), name)
        if twin is not None and twin.metadata.get("kafka_type") in _KIO_TIME_TYPES:
            return self.render_time_field(twin)
        if twin is not None:
            name = twin.name
        metadata: dict[str, object] = {}
        default: str | None = None
        if json_type.startswith("[]"):
            inner = json_type[2:]
            if inner in _PRIMITIVES:
                item_type, metadata["kafka_type"] = self.python_type(f, inner)
                annotation = f"tuple[{item_type}, ...]"
                default = "()"  # as kio does for arrays of primitives
            else:
                struct_fields = f.get("fields") or self.common_structs[inner]["fields"]
                self.render_struct(inner, struct_fields, "nested")
                annotation = f"tuple[{self.struct_name(inner)}, ...]"
        elif json_type in _PRIMITIVES:
            annotation, metadata["kafka_type"] = self.python_type(f, json_type)
            default = self.default_literal(f, annotation, json_type)
        else:
            struct_fields = f.get("fields") or self.common_structs[json_type]["fields"]
            self.render_struct(json_type, struct_fields, "nested")
            annotation = self.struct_name(json_type)
        nullable = self.version in Versions.parse(f.get("nullableVersions"))
        if nullable:
            annotation = f"{annotation} | None"
            default = "None" if f.get("default") == "null" else None
        if tagged:
            metadata["tag"] = f["tag"]
            default = self.tagged_default(f, annotation, json_type, nullable, default)
        args = []
        if metadata:
            args.append(f"metadata={json.dumps(metadata)}")
        if default is not None:
            args.append(f"default={default}")
        if not args:
            return f"{name}: {annotation}"
        line = f"{name}: {annotation} = field({', '.join(args)})"
        if len(line) <= 84:
            return line
        return f"{name}: {annotation} = field(\n        {', '.join(args)}\n    )"

    def twin_field(self, struct: str, name: str) -> dataclasses.Field | None:
        """kio's field for the JSON field ``name`` of ``struct`` (kio drops a duration's "_ms")."""
        fields_ = self.twins.get(struct, {})
        return fields_.get(name) or fields_.get(name.removesuffix("_ms"))

    def render_time_field(self, twin: dataclasses.Field) -> str:
        """A field kio types as a duration or a timestamp, written as kio writes it."""
        kafka_type = twin.metadata["kafka_type"]
        annotation = _KIO_TIME_TYPES[kafka_type]
        self.imports.setdefault("kio.static.primitive", set()).add(annotation)
        if type(None) in typing.get_args(twin.type):
            annotation += " | None"
        args = [f"metadata={json.dumps(dict(twin.metadata))}"]
        if twin.default is None:
            args.append("default=None")
        elif isinstance(twin.default, datetime.timedelta):
            self.plain_imports.add("datetime")
            millis = twin.default // datetime.timedelta(milliseconds=1)
            args.append(f"default={annotation}.parse(datetime.timedelta(milliseconds={millis}))")
        elif twin.default is not dataclasses.MISSING:
            raise ValueError(f"unsupported default {twin.default!r} for {twin.name}")
        line = f"{twin.name}: {annotation} = field({', '.join(args)})"
        if len(line) <= 84:
            return line
        return f"{twin.name}: {annotation} = field(\n        {', '.join(args)}\n    )"

    def tagged_default(self, f: dict, annotation: str, json_type: str, nullable: bool,
                       default: str | None) -> str:
        """The default of a tagged field, always spelled out.

        A tagged field is on the wire only when its value differs from its default
        (KIP-482), and an absent one reads as the default; kio's writer compares with the
        dataclass default, and kafka_py.clients.common.protocol.codec's reader fills it in. Kafka's
        implicit defaults (0, false, "", empty array, the zero uuid) are written as
        literals, so neither side depends on inferring them from the type.
        """
        if nullable:
            if f.get("default") != "null":
                # Kafka would write a null here as a tagged field; kio's writer cannot.
                raise NotImplementedError(f"tagged nullable field {f['name']} in "
                                          f"{self.spec['name']} has a non-null default")
            return "None"
        if default is not None:
            return default
        if json_type.startswith("[]"):
            return "()"
        if json_type in ("int8", "int16", "int32", "int64", "uint16"):
            return f"{annotation}(0)"
        implicit = {"bool": "False", "string": '""', "bytes": 'b""', "uuid": "None"}
        if json_type in implicit:
            return implicit[json_type]
        # A tagged struct would need a default instance of the struct; no spec has one.
        raise NotImplementedError(f"tagged {json_type} field {f['name']} in {self.spec['name']}")

    def default_literal(self, f: dict, annotation: str, json_type: str) -> str | None:
        if "default" not in f or f["default"] == "null":
            return None
        raw = str(f["default"])
        if json_type == "bool":
            return "True" if raw == "true" else "False"
        if json_type in ("int8", "int16", "int32", "int64"):
            return f"{annotation}({int(raw, 0)})"
        if json_type == "string":
            return json.dumps(raw)
        raise ValueError(f"unsupported default {raw!r} for {f['name']}")


def _collect_twins(cls: type, twins: dict[str, dict[str, dataclasses.Field]]) -> None:
    """kio's fields of ``cls`` and of every struct nested in it, by struct name."""
    if cls.__name__ in twins:
        return
    twins[cls.__name__] = {f.name: f for f in dataclasses.fields(cls)}
    for f in dataclasses.fields(cls):
        pending = [f.type]
        while pending:
            t = pending.pop()
            if dataclasses.is_dataclass(t):
                _collect_twins(t, twins)
            pending.extend(typing.get_args(t))


def _kio_twin(api_key: int, version: int, kind: str) -> type:
    from kio.index import load_request_schema, load_response_schema

    return (load_request_schema if kind == "request" else load_response_schema)(api_key, version)


def generate(spec_dir: Path, out_dir: Path = SCHEMA_ROOT,
             old_versions: dict[str, range] = KIO_MISSING_VERSIONS) -> list[Path]:
    """Every version of GENERATED_APIS, and the ``old_versions`` of the APIs kio starts late."""
    written = []
    index: dict[int, dict[int, tuple[str, str]]] = {}
    for api in (*GENERATED_APIS, *old_versions):
        request = load_spec(spec_dir / f"{api}Request.json")
        response = load_spec(spec_dir / f"{api}Response.json")
        package = snake_case(api)
        versions = Versions.parse(request["validVersions"])
        missing = old_versions.get(api)
        if missing is not None:
            versions = Versions(missing.start, missing[-1])
        api_dir = out_dir / package
        api_dir.mkdir(exist_ok=True)
        init = api_dir / "__init__.py"
        init.write_text(f'"""{api} messages, one module per version (generated)."""\n')
        written.append(init)
        for version in range(versions.low, versions.high + 1):
            version_dir = api_dir / f"v{version}"
            version_dir.mkdir(exist_ok=True)
            for kind, spec in (("request", request), ("response", response)):
                path = version_dir / f"{kind}.py"
                twin = _kio_twin(spec["apiKey"], missing[-1] + 1, kind) if missing is not None else None
                path.write_text(ModuleWriter(spec, version, twin).render())
                written.append(path)
            init = version_dir / "__init__.py"
            init.write_text(
                f'"""{api} version {version} (generated)."""\n'
                f"from .request import {api}Request\n"
                f"from .response import {api}Response\n\n"
                f'__all__ = ("{api}Request", "{api}Response")\n'
            )
            written.append(init)
            base = f"kafka_py.clients.common.protocol.schema.{package}.v{version}"
            index.setdefault(request["apiKey"], {})[version] = (
                f"{base}.request:{api}Request",
                f"{base}.response:{api}Response",
            )
    lines = [
        '"""Where the generated message classes live: api key -> version -> (request, response).',
        "",
        "Generated by kafka_py.clients.common.protocol.schema.generator; do not edit.",
        '"""',
        "from __future__ import annotations",
        "",
        "from typing import Final",
        "",
        "schema_index: Final[dict[int, dict[int, tuple[str, str]]]] = {",
    ]
    for api_key in sorted(index):
        lines.append(f"    {api_key}: {{")
        for version, (req, resp) in sorted(index[api_key].items()):
            lines.append(f"        {version}: (")
            lines.append(f'            "{req}",')
            lines.append(f'            "{resp}",')
            lines.append("        ),")
        lines.append("    },")
    lines.append("}")
    index_path = out_dir / "index.py"
    index_path.write_text("\n".join(lines) + "\n")
    written.append(index_path)
    return written


def run_generator(generate_modules: Callable[[Path, Path], list[Path]], description: str,
                  spec_dir_help: str, default_out_dir: Path) -> None:
    """The command line of a generator: read --spec-dir, write under --out-dir."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--spec-dir", type=Path, required=True, help=spec_dir_help)
    parser.add_argument("--out-dir", type=Path, default=default_out_dir)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for path in generate_modules(args.spec_dir, args.out_dir):
        logger.info("wrote %s", path)


def main() -> None:
    run_generator(generate, "Generate kio-style message classes from Kafka 2.8.2 JSON specs.",
                  "Kafka 2.8.2's clients/src/main/resources/common/message", SCHEMA_ROOT)


if __name__ == "__main__":
    main()

"""Request header version 0, from Kafka 2.8.2's RequestHeader.json ("versions": "0-2").

Only ControlledShutdown v0 sends it: api key, api version and correlation id,
without the client id every later header carries. kio starts at version 1.
"""
from dataclasses import dataclass
from dataclasses import field
from typing import ClassVar

from kio.static.constants import EntityType
from kio.static.primitive import i16
from kio.static.primitive import i32


@dataclass(frozen=True, slots=True, kw_only=True)
class RequestHeader:
    __type__: ClassVar = EntityType.header
    __version__: ClassVar[i16] = i16(0)
    __flexible__: ClassVar[bool] = False
    request_api_key: i16 = field(metadata={"kafka_type": "int16"})
    request_api_version: i16 = field(metadata={"kafka_type": "int16"})
    correlation_id: i32 = field(metadata={"kafka_type": "int32"})

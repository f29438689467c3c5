"""Message handlers that tests hand to kafka-mirror-maker.sh by class path
(``--message.handler tests.tools.mirror_maker_handlers.RenameTopic``)."""
from __future__ import annotations

from kafka_py.core.tools.mirror_maker import BaseConsumerRecord, MirrorMakerMessageHandler, ProducerRecord


class RenameTopic(MirrorMakerMessageHandler):
    """Sends each record to ``<args><topic>`` with a header naming its source offset, and drops
    records whose value is ``drop``."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def handle(self, record: BaseConsumerRecord) -> list[ProducerRecord]:
        if record.value == b"drop":
            return []
        headers = list(record.headers) + [("source-offset", str(record.offset).encode())]
        return [ProducerRecord(self.prefix + record.topic, None, record.timestamp, record.key, record.value, headers)]

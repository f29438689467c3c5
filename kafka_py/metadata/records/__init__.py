"""The metadata records (metadata/src/main/resources/common/metadata/*.json), generated.

One module per record and version, ``kafka_py.metadata.records.<record>.v<N>``, in kio's
dataclass style, so kio's entity writer and kafka_py.clients.common.protocol.codec read and write them
like any message body; ``metadata_record_type`` maps api keys and versions to the classes.
``kafka_py.metadata.records.generator`` writes them.
"""

"""Port of core/src/main/scala/kafka/coordinator/group: the group coordinator, its groups and
members, the delayed join/sync/heartbeat operations and the __consumer_offsets formats."""
from kafka_py.core.coordinator.group.group_coordinator import GroupCoordinator
from kafka_py.core.coordinator.group.group_metadata import GroupMetadata, GroupState
from kafka_py.core.coordinator.group.group_metadata_manager import GROUP_METADATA_TOPIC_NAME, GroupMetadataManager
from kafka_py.core.coordinator.group.member_metadata import MemberMetadata
from kafka_py.core.coordinator.group.offset_and_metadata import OffsetAndMetadata
from kafka_py.core.coordinator.group.offset_config import GroupConfig, OffsetConfig

__all__ = [
    "GROUP_METADATA_TOPIC_NAME",
    "GroupConfig",
    "GroupCoordinator",
    "GroupMetadata",
    "GroupMetadataManager",
    "GroupState",
    "MemberMetadata",
    "OffsetAndMetadata",
    "OffsetConfig",
]

"""Port of core/src/main/scala/kafka/api/LeaderAndIsr.scala.

Also holds LeaderIsrAndControllerEpoch (a case class at the end of
core/.../kafka/controller/KafkaController.scala), the value stored in
/brokers/topics/<t>/partitions/<p>/state, and KafkaController's InitialControllerEpoch and
InitialControllerEpochZkVersion: a broker's Partition and ReplicaManager start from that
epoch, and taking it from here spares a KRaft node importing the ZooKeeper controller.

``zk_version`` is the version of the state znode the value was read from (or written as);
the controller's conditional writes to that znode are made against it, which is how two
controllers, or a controller and a leader shrinking its ISR, cannot overwrite each other.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Iterable

# KafkaController.InitialControllerEpoch and InitialControllerEpochZkVersion.
INITIAL_CONTROLLER_EPOCH = 0
INITIAL_CONTROLLER_EPOCH_ZK_VERSION = 0


@dataclass(frozen=True, slots=True)
class LeaderAndIsr:
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    zk_version: int

    INITIAL_LEADER_EPOCH = 0
    INITIAL_ZK_VERSION = 0
    NO_LEADER = -1
    NO_EPOCH = -1
    LEADER_DURING_DELETE = -2
    EPOCH_DURING_DELETE = -2

    def __post_init__(self) -> None:
        # Callers pass lists (Kafka's List[Int]); store a tuple so the value stays hashable.
        object.__setattr__(self, "isr", tuple(self.isr))

    @classmethod
    def of(cls, leader: int, isr: Iterable[int]) -> "LeaderAndIsr":
        """A fresh state: initial leader epoch and znode version (Kafka's two-argument apply)."""
        return cls(leader, cls.INITIAL_LEADER_EPOCH, tuple(isr), cls.INITIAL_ZK_VERSION)

    @classmethod
    def during_delete(cls, isr: Iterable[int]) -> "LeaderAndIsr":
        return cls.of(cls.LEADER_DURING_DELETE, isr)

    def with_zk_version(self, zk_version: int) -> "LeaderAndIsr":
        return replace(self, zk_version=zk_version)

    def new_leader(self, leader: int) -> "LeaderAndIsr":
        return self.new_leader_and_isr(leader, self.isr)

    def new_leader_and_isr(self, leader: int, isr: Iterable[int]) -> "LeaderAndIsr":
        # Any change of leader or ISR made by the controller bumps the leader epoch.
        return LeaderAndIsr(leader, self.leader_epoch + 1, tuple(isr), self.zk_version)

    def new_epoch_and_zk_version(self) -> "LeaderAndIsr":
        return self.new_leader_and_isr(self.leader, self.isr)

    @property
    def leader_opt(self) -> int | None:
        return None if self.leader == LeaderAndIsr.NO_LEADER else self.leader

    def equals_ignore_zk(self, other: "LeaderAndIsr | None") -> bool:
        if other is None:
            return False
        return (self.leader == other.leader and self.leader_epoch == other.leader_epoch
                and self.isr == other.isr)

    def __str__(self) -> str:
        return (f"LeaderAndIsr(leader={self.leader}, leaderEpoch={self.leader_epoch}, "
                f"isr={list(self.isr)}, zkVersion={self.zk_version})")


@dataclass(frozen=True, slots=True)
class LeaderIsrAndControllerEpoch:
    leader_and_isr: LeaderAndIsr
    controller_epoch: int

    def __str__(self) -> str:
        lai = self.leader_and_isr
        return (f"(Leader:{lai.leader},ISR:{','.join(map(str, lai.isr))},LeaderEpoch:{lai.leader_epoch},"
                f"ControllerEpoch:{self.controller_epoch})")

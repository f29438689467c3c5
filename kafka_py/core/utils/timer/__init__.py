"""Port of core/src/main/scala/kafka/utils/timer: the hierarchical timing wheel that backs
the broker's delayed operations (purgatories)."""
from kafka_py.core.utils.timer.system_timer import SystemTimer, Timer
from kafka_py.core.utils.timer.timer_task import TimerTask
from kafka_py.core.utils.timer.timer_task_list import DelayQueue, TimerTaskEntry, TimerTaskList
from kafka_py.core.utils.timer.timing_wheel import TimingWheel

__all__ = ["DelayQueue", "SystemTimer", "Timer", "TimerTask", "TimerTaskEntry",
           "TimerTaskList", "TimingWheel"]

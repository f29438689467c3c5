"""A Log driven by random operations against an in-memory model (hypothesis stateful test).

The model is the list of batches appended (first offset, [(key, value)]) plus the log
start offset; appends, reads, rolls, truncation, DeleteRecords, size retention and
clean or crashing restarts must all leave the Log agreeing with it.
"""
from __future__ import annotations

import shutil
import tempfile
from dataclasses import replace

import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from kafka_py.clients.common.errors import OffsetOutOfRangeException
from kafka_py.log.log import FetchIsolation, Log
from kafka_py.clients.common.utils.time import MockTime
from tests.log.log_test_helpers import config, decode, make_records

records_strategy = st.lists(
    st.tuples(st.one_of(st.none(), st.binary(min_size=0, max_size=8)), st.binary(min_size=0, max_size=60)),
    min_size=1, max_size=4)


class LogMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.root = tempfile.mkdtemp(prefix="log-machine-")
        self.dir = self.root + "/machine-0"
        self.time = MockTime()
        self.config = config(segment_size=400, max_index_size=1024, index_interval=64, retention_ms=-1)
        self.log = Log(self.dir, self.config, time=self.time)
        self.batches: list[tuple[int, list]] = []  # (first offset, [(key, value)])
        self.next_offset = 0
        self.log_start_offset = 0

    def teardown(self):
        try:
            self.log.close()
        except Exception:  # noqa: BLE001 - the log may be closed by a failed step
            pass
        shutil.rmtree(self.root, ignore_errors=True)

    # -- model helpers -------------------------------------------------------------------

    def entries(self, start: int):
        return [(first + i, kv[0], kv[1]) for first, kvs in self.batches for i, kv in enumerate(kvs)
                if first + i >= start]

    def reopen(self, clean: bool):
        recovery_point, lso = self.log.recovery_point, self.log.log_start_offset
        if clean:
            self.log.close()
        else:
            self.log.close_handlers()
        self.log = Log(self.dir, self.config, time=self.time, recovery_point=recovery_point,
                       log_start_offset=lso, had_clean_shutdown=clean)

    # -- rules ---------------------------------------------------------------------------

    @rule(kvs=records_strategy)
    def append(self, kvs):
        info = self.log.append_as_leader(make_records(kvs), leader_epoch=0)
        assert info.first_offset.message_offset == self.next_offset
        assert info.last_offset == self.next_offset + len(kvs) - 1
        self.batches.append((self.next_offset, list(kvs)))
        self.next_offset += len(kvs)

    @rule(data=st.data(), max_length=st.integers(min_value=1, max_value=600))
    def read(self, data, max_length):
        offset = data.draw(st.integers(min_value=self.log_start_offset, max_value=self.next_offset))
        info = self.log.read(offset, max_length, FetchIsolation.LOG_END, min_one_message=True)
        got = [e for e in decode(info.records) if e[0] >= offset]
        expected = self.entries(offset)
        assert got == expected[: len(got)]
        if offset < self.next_offset:
            assert got, f"nothing read at {offset} below the end {self.next_offset}"

    @rule(data=st.data())
    def read_out_of_range(self, data):
        below = self.log_start_offset > 0 and data.draw(st.booleans())
        offset = self.log_start_offset - 1 if below else self.next_offset + 1
        with pytest.raises(OffsetOutOfRangeException):
            self.log.read(offset, 100)

    @rule()
    def roll(self):
        self.log.roll()

    @precondition(lambda self: self.batches)
    @rule(data=st.data())
    def truncate_to_batch_boundary(self, data):
        candidates = [first for first, _ in self.batches if first >= self.log_start_offset]
        if not candidates:
            return
        target = data.draw(st.sampled_from(candidates))
        self.log.truncate_to(target)
        self.batches = [(first, kvs) for first, kvs in self.batches if first < target]
        self.next_offset = target

    @rule(data=st.data())
    def delete_records(self, data):
        self.log.update_high_watermark(self.log.log_end_offset)
        target = data.draw(st.integers(min_value=self.log_start_offset, max_value=self.next_offset))
        self.log.maybe_increment_log_start_offset(target)
        self.log.delete_old_segments()
        self.log_start_offset = target

    @rule(retention=st.integers(min_value=0, max_value=2000))
    def retention_by_size(self, retention):
        self.log.update_high_watermark(self.log.log_end_offset)
        self.log.config = replace(self.config, retention_size=retention)
        size_before = self.log.size
        self.log.delete_old_segments()
        self.log.config = self.config
        new_start = self.log.log_start_offset
        assert self.log_start_offset <= new_start <= self.next_offset
        assert self.log.size <= size_before
        # only whole segments go, from the front: the start offset lands on a segment base
        assert new_start == self.log_start_offset or new_start == self.log.log_segments[0].base_offset
        self.log_start_offset = new_start

    @rule()
    def reopen_clean(self):
        self.reopen(clean=True)

    @rule()
    def crash_and_recover(self):
        self.reopen(clean=False)

    # -- invariants ----------------------------------------------------------------------

    @invariant()
    def offsets_agree(self):
        assert self.log.log_end_offset == self.next_offset
        assert self.log.log_start_offset == self.log_start_offset
        assert self.log.high_watermark <= self.log.log_end_offset
        segments = self.log.log_segments
        assert segments and segments[0].base_offset <= self.log_start_offset
        assert [s.base_offset for s in segments] == sorted(s.base_offset for s in segments)


LogMachine.TestCase.settings = settings(max_examples=60, stateful_step_count=40, deadline=None)
TestLogStateMachine = LogMachine.TestCase

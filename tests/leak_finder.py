"""Finds what in this process still refers to something that should be gone.

After a topic is deleted nothing of the broker should still name it: ``find_holders`` walks
every object the garbage collector tracks and reports each container (dict, list, set,
tuple, deque, an object's slots) that holds a ``TopicPartition`` of one of the given topics,
or a string or bytes containing one of the given markers, together with the chain of
referrers that names who owns it (``ReplicaManager._all_partitions`` ...).

Strings are not tracked by the collector themselves, so they are found through the
containers that hold them; the same goes for tuples the collector has untracked.
"""
from __future__ import annotations

import collections
import gc
import sys
import types
from typing import Any, Callable, Iterable, Iterator, Optional

from kafka_py.clients.common.topic_partition import TopicPartition

# Containers owned by the finder's own frames and by the test harness are not the broker's.
_IGNORED_TYPES = (types.FrameType, types.CodeType, types.FunctionType, types.ModuleType, type)


def _elements(obj: Any) -> Iterator[Any]:
    if isinstance(obj, dict):
        for k, v in list(obj.items()):
            yield k
            yield v
    elif isinstance(obj, (list, tuple, set, frozenset, collections.deque)):
        yield from list(obj)
    else:
        # Python 3.11 keeps most instance attributes outside any tracked dict: read them here
        attrs = getattr(obj, "__dict__", None)
        if isinstance(attrs, dict):
            for v in list(attrs.values()):
                yield v
        slots = getattr(type(obj), "__slots__", None)
        if slots:
            for name in ([slots] if isinstance(slots, str) else slots):
                try:
                    yield getattr(obj, name)
                except AttributeError:
                    pass


class LeakReport:
    def __init__(self, holder: Any, what: Any, path: list[str]) -> None:
        self.holder = holder
        self.what = what
        self.path = path

    def __str__(self) -> str:
        return f"{' <- '.join(self.path)} holds {self.what!r}"[:600]


class _Matcher:
    def __init__(self, topics: Iterable[str], markers: Iterable[str]) -> None:
        self.topics = frozenset(topics)
        self.markers = tuple(markers)
        self.bmarkers = tuple(m.encode() for m in self.markers)

    def matches(self, value: Any, depth: int = 0) -> Any:
        """The offending value inside ``value`` (a scalar or an untracked tuple), else None."""
        if isinstance(value, TopicPartition):
            return value if value.topic in self.topics else None
        if isinstance(value, str):
            if value in self.topics or any(m in value for m in self.markers):
                return value
            return None
        if isinstance(value, (bytes, bytearray)):
            if len(value) > 1 << 20:
                return None
            return value if any(m in value for m in self.bmarkers) else None
        if isinstance(value, (tuple, frozenset)) and depth < 4 and not gc.is_tracked(value):
            for element in value:
                found = self.matches(element, depth + 1)
                if found is not None:
                    return found
        return None


def _describe(obj: Any) -> str:
    name = type(obj).__qualname__
    if isinstance(obj, (dict, list, set, collections.deque)):
        return f"{name}(len={len(obj)})"
    if isinstance(obj, types.FunctionType):
        return f"function {obj.__qualname__}"
    if isinstance(obj, types.MethodType):
        return f"method {obj.__func__.__qualname__}"
    if isinstance(obj, (types.GeneratorType, types.CoroutineType)):
        return f"{name} {obj.__qualname__}"
    if isinstance(obj, types.FrameType):
        return f"frame of {obj.f_code.co_qualname}"
    if isinstance(obj, types.CellType):
        functions = [f for f in gc.get_referrers(obj) if isinstance(f, types.FunctionType)]
        if functions:
            return f"closure cell of {functions[0].__qualname__}"
    return name


def _owner_path(holder: Any, ignore_ids: set[int], max_depth: int = 10) -> list[str]:
    """Walk referrers up from ``holder`` to something with a name: an object's attribute, a
    module global, a function's closure; each hop is described."""
    path = [_describe(holder)]
    current = holder
    # the finder's own temporaries (each hop's list of referrers) refer to what they list
    own = set(ignore_ids) | _own_frames() | {id(holder), id(path)}
    for _ in range(max_depth):
        # A running function's locals are not objects the collector can name as referrers.
        local = _thread_local_holding(current, own)
        if local is not None:
            return path + [local]
        referrers = gc.get_referrers(current)
        own.add(id(referrers))
        referrers = [r for r in referrers if id(r) not in own]
        own.add(id(referrers))
        if not referrers:
            break
        named = None
        for r in referrers:
            if isinstance(r, types.ModuleType):
                return path + [f"module {r.__name__}"]
            if isinstance(r, dict):
                continue
            # an object referring to it directly (managed __dict__ or slots)
            attrs = getattr(r, "__dict__", None)
            if isinstance(attrs, dict) and not isinstance(r, type):
                for k, v in list(attrs.items()):
                    if v is current:
                        named = (r, f"{type(r).__qualname__}.{k}")
                        break
            slots = getattr(type(r), "__slots__", None) or ()
            for slot in ([slots] if isinstance(slots, str) else slots):
                if named is None and getattr(r, slot, None) is current:
                    named = (r, f"{type(r).__qualname__}.{slot}")
            if named is not None:
                break
        if named is None:
            for r in referrers:
                if not isinstance(r, dict):
                    continue
                for k, v in list(r.items()):
                    if v is current:
                        owners = [o for o in gc.get_referrers(r) if getattr(o, "__dict__", None) is r]
                        if owners:
                            named = (owners[0], f"{type(owners[0]).__qualname__}.{k}")
                        elif "__name__" in r and "__builtins__" in r:
                            return path + [f"module {r['__name__']}.{k}"]
                        break
                if named is None:
                    is_key = _hashable(current) and any(key is current for key in list(r.keys()))
                    named = (r, f"{'key' if is_key else 'value'} in {_describe(r)}")
                break
        if named is None:
            named = (referrers[0], _describe(referrers[0]))
        own.add(id(named[0]))
        path.append(named[1])
        current = named[0]
        if isinstance(current, types.FrameType):
            break
    return path


def _thread_local_holding(obj: Any, own: set[int]) -> str | None:
    import threading

    names = {t.ident: t.name for t in threading.enumerate()}
    mine = _own_frames()
    for ident, frame in sys._current_frames().items():
        while frame is not None:
            if id(frame) not in own and id(frame) not in mine:
                for name, value in list(frame.f_locals.items()):
                    if value is obj:
                        return (f"local {name!r} of {frame.f_code.co_qualname} "
                                f"in thread {names.get(ident, ident)!r}")
            frame = frame.f_back
    return None


def _own_frames() -> set[int]:
    """The frames of the calling thread's stack: the finder's and its caller's locals."""
    ids = set()
    frame = sys._getframe()
    while frame is not None:
        ids.add(id(frame))
        frame = frame.f_back
    return ids


def _hashable(obj: Any) -> bool:
    try:
        hash(obj)
        return True
    except TypeError:
        return False


def find_holders(topics: Iterable[str], markers: Iterable[str] = (), limit: int = 50,
                 ignore: Iterable[Any] = ()) -> list[LeakReport]:
    """Every tracked container that still refers to one of ``topics`` (as a TopicPartition
    or as the name) or to a string containing one of ``markers``; ``ignore``: objects of the
    caller (its lists of names) that are not to be reported."""
    matcher = _Matcher(topics, markers)
    ignore = ignore if isinstance(ignore, list) else list(ignore)
    gc.collect()
    objects = gc.get_objects()
    ignore_ids = {id(objects), id(ignore)} | _own_frames() | {id(o) for o in ignore}
    ignore_ids.add(id(matcher.topics))
    ignore_ids.add(id(matcher.markers))
    reports: list[LeakReport] = []
    seen_holders: set[int] = set()
    for obj in objects:
        if id(obj) in ignore_ids or isinstance(obj, _IGNORED_TYPES):
            continue
        if isinstance(obj, (TopicPartition, _Matcher, LeakReport)):
            # a TopicPartition is reported through the container holding it
            continue
        try:
            found = None
            for element in _elements(obj):
                found = matcher.matches(element)
                if found is not None:
                    break
        except Exception:  # noqa: BLE001 - an odd object's iteration must not stop the walk
            continue
        if found is not None and id(obj) not in seen_holders:
            seen_holders.add(id(obj))
            reports.append(LeakReport(obj, found, _owner_path(obj, ignore_ids | {id(reports)})))
        if len(reports) >= limit:
            break
    del objects
    return reports




def persistent_holders(topics: Iterable[str], markers: Iterable[str] = (), attempts: int = 5,
                       interval_s: float = 1.0, ignore: Iterable[Any] = (),
                       rightly_held: Optional[Callable[[], Iterable[Any]]] = None) -> list[LeakReport]:
    """``find_holders``, repeated until a walk finds nothing (at most ``attempts`` walks,
    ``interval_s`` apart): what a thread holds for a moment while it finishes a request or
    a timer task is not a leak; what every walk finds is. Returns the last walk's reports.
    ``rightly_held``, called before each walk, gives more objects to ignore: state that may
    name the topics and is replaced while the broker runs (its metadata cache's view)."""
    import time

    topics = list(topics)
    markers = list(markers)
    ignore = list(ignore) + [topics, markers]
    reports: list[LeakReport] = []
    for attempt in range(attempts):
        held = list(rightly_held()) if rightly_held is not None else []
        reports = find_holders(topics, markers, ignore=ignore + held + [held])
        del held
        if not reports:
            return []
        if attempt < attempts - 1:
            del reports[:]
            time.sleep(interval_s)
    return reports


__all__ = ["find_holders", "persistent_holders", "LeakReport"]

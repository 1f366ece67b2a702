"""The timing model's hazard log (`_AccessLog`): an interval index that finds exactly the records
overlapping an access, names the one a list sorted by (start byte, arrival) would hold first,
and whose lookups do not scan every shorter record because one long access was logged."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ziggurat.interpreters.timing import Access, _AccessLog, _Record

SPACES = ("gm", "ub")


def record(space: str, start: int, length: int) -> _Record:
    return _Record(Access(space, start, start + length, length), "mte2", 1, False, None)


def brute_force(records: list[_Record], access: Access) -> list[_Record]:
    """What one list sorted by start byte (ties in arrival order) holds that overlaps `access`."""
    hits = [
        r
        for r in records
        if r.access.space == access.space
        and r.access.start < access.end
        and r.access.end > access.start
    ]
    return sorted(hits, key=lambda r: r.access.start)  # stable: arrival order among equal starts


accesses = st.tuples(
    st.sampled_from(SPACES), st.integers(0, 300), st.sampled_from([0, 1, 2, 7, 16, 33, 100, 5000])
)
steps = st.lists(
    st.one_of(
        st.tuples(st.just("add"), accesses),
        st.tuples(st.just("remove"), st.integers(0, 1000)),
        st.tuples(st.just("keep"), st.integers(2, 5)),
        st.tuples(st.just("query"), accesses),
    ),
    max_size=60,
)


@settings(max_examples=200, deadline=None)
@given(steps)
def test_lookups_match_a_sorted_list(program):
    log, live = _AccessLog(), []
    for kind, argument in program:
        if kind == "add":
            live.append(record(*argument))
            log.add(live[-1])
        elif kind == "remove" and live:
            log.remove(live.pop(argument % len(live)))
        elif kind == "keep":
            log.keep(lambda r, argument=argument: r.access.start % argument != 0)
            live = [r for r in live if r.access.start % argument != 0]
        elif kind == "query":
            space, start, length = argument
            access = Access(space, start, start + length, length)
            hits, expected = log.overlapping(access), brute_force(live, access)
            assert sorted(map(id, hits)) == sorted(map(id, expected))
            if expected:
                assert log.first(hits) is expected[0]
        assert log.size == len(live)


class _CountedAccess:
    """An access that counts how often a lookup compares its end."""

    reads = 0

    def __init__(self, start: int, end: int) -> None:
        self.space, self.start, self._end = "gm", start, end

    @property
    def end(self) -> int:
        _CountedAccess.reads += 1
        return self._end


def test_one_long_access_does_not_widen_every_lookup():
    log = _AccessLog()
    log.add(_Record(_CountedAccess(0, 300_000), "mte2", 1, False, None))  # a whole padded input
    for i in range(10_000):  # short disjoint loads after it
        log.add(_Record(_CountedAccess(16 * i, 16 * i + 8), "mte2", i + 2, False, None))
    _CountedAccess.reads = 0
    hits = log.overlapping(Access("gm", 16 * 9_000, 16 * 9_000 + 8, 8))
    assert sorted(r.seq for r in hits) == [1, 9_002]
    assert _CountedAccess.reads < 10, f"the lookup compared {_CountedAccess.reads} records"

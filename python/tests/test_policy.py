"""Policies written in Python run through the same simulator and devices as the built-in
ones: a Python LRU and a Python BPLRU count exactly what the built-in LRU and BPLRU count;
a policy that breaks the replacer contract is stopped with a clear error."""

from __future__ import annotations

import functools
from collections import OrderedDict

import pandas.testing as pdt
import pytest

import flashbuf
from conftest import PyBplru, PyLru

TRACE = "gen:zipf,requests=20000,pages=2000,write-ratio=0.4,seed=9"
SHORT = "gen:zipf,requests=4500,pages=600,write-ratio=0.4,seed=9"
# Everything but the identity and the timing.
COUNTS = [c for c in flashbuf.COLUMNS if c not in ("policy", "policy_name", "run_id") + flashbuf.TIMING_COLUMNS]


def compare(python_policy, builtin, trace=TRACE, **kwargs):
    df = flashbuf.run(trace, [python_policy, builtin], **kwargs)
    mine, theirs = df[df.policy_name == python_policy.name], df[df.policy == builtin]
    assert len(mine) == len(theirs) > 0
    pdt.assert_frame_equal(mine[COUNTS].reset_index(drop=True), theirs[COUNTS].reset_index(drop=True), check_exact=True)
    return df


@pytest.mark.parametrize("device", ["page", "bast", "ideal"])
def test_a_python_lru_counts_exactly_the_builtin_lru(device):
    df = compare(PyLru, "lru", buffers=[50, 400], device=device)
    assert set(df.policy) == {"py-lru", "lru"}
    assert (df.hits > 0).all() and (df.page_writes > 0).all()


def test_a_python_lru_in_a_write_buffer_with_intervals_and_checks():
    # check=True compares the policy's dirty bits and __len__ with the buffer's after every
    # request (one Python call per frame), and calls its check_invariants.
    df = compare(PyLru, "lru", SHORT, buffers=[32], device="fast", write_miss="no-fetch", interval=1000, check=True,
                 warmup=500)
    assert sorted(set(df.interval)) == [1, 2, 3, 4]


class PyBplru64(PyBplru):
    """The same with the REF preset's 64 pages per block, so that padded blocks are flash
    blocks and log blocks switch-merge."""

    name = "py-bplru-64"
    block_pages = 64

    def __init__(self, capacity: int) -> None:
        super().__init__(capacity, ppb=64)


@pytest.mark.parametrize("policy, builtin, device", [
    (PyBplru, "bplru:ppb=4", "bast"),
    (PyBplru64, "bplru:ppb=64", "bast"),
    (PyBplru64, "bplru:ppb=64", "fast"),
])
def test_a_python_block_padding_policy_counts_exactly_the_builtin_bplru(policy, builtin, device):
    df = compare(policy, builtin, buffers=[40, 300], device=device, preset="ref")
    assert (df.padding_reads > 0).all() and (df.padding_writes > 0).all()
    if builtin.endswith("64"):
        assert (df.merges_switch > 0).all()
    checked = compare(policy, builtin, SHORT, buffers=[24], device=device, preset="ref", check=True)
    assert (checked.padding_writes > 0).all()


def test_parameters_through_partial_name_the_policy():
    df = flashbuf.run(TRACE, [functools.partial(PyBplru, ppb=4), "bplru:ppb=4"], 200, device="bast")
    assert df.policy.tolist() == ["py-bplru:ppb=4", "bplru:ppb=4"]
    assert df.page_writes.iloc[0] == df.page_writes.iloc[1]
    assert df.run_id.iloc[0] != df.run_id.iloc[1]


class Broken(PyLru):
    """LRU that breaks the contract in the way its `mistake` says, at the 3rd eviction."""

    mistake = "none"

    def __init__(self, capacity):
        super().__init__(capacity)
        self.evictions = 0

    def victims(self, incoming):
        self.evictions += 1
        if self.evictions < 3:
            return super().victims(incoming)
        m = self.mistake
        if m == "free":
            return self.capacity + 5
        if m == "twice":
            f = next(iter(self.order))
            return [f, f]
        if m == "none-named":
            return []
        if m == "pad-outside":
            f = next(iter(self.order))
            return flashbuf.Evictions(victims=[f], pad=(10**9, 4))
        if m == "pad-misaligned":
            f = next(iter(self.order))
            return flashbuf.Evictions(victims=[f], pad=(3, 4))
        if m == "wrong-type":
            return "frame 3"
        if m == "raises":
            raise ZeroDivisionError("my policy divided by zero")
        raise AssertionError(m)


@pytest.mark.parametrize(
    "mistake, message",
    [
        ("free", r"victims\(\) at request \d+: frame 15 does not exist \(frames are 0\.\.10\)"),
        ("twice", r"frame \d+ is named twice"),
        ("none-named", r"no victim named \(name at least one frame, or set bypass\)"),
        ("pad-outside", r"outside the padded block 1000000000\.\.1000000004"),
        ("pad-misaligned", r"pad=\(3, 4\): a block is \(first_page, pages\)"),
        ("wrong-type", r"returned 'frame 3', which is neither a frame number"),
    ],
)
def test_a_policy_that_breaks_the_contract_is_stopped(mistake, message):
    cls = type(f"Broken_{mistake}", (Broken,), {"mistake": mistake, "name": "broken"})
    with pytest.raises(flashbuf.PolicyContractError, match=message) as e:
        flashbuf.run(TRACE, cls, 10, device="ideal")
    assert str(e.value).startswith("policy broken: ")
    assert "(policy broken on trace zipf," in str(e.value) and "with 10 frames)" in str(e.value)


def test_a_padded_block_must_hold_every_buffered_page_of_it():
    class LeavesOne(PyBplru):
        name = "leaves-one"

        def victims(self, incoming):
            ev = super().victims(incoming)
            if ev.pad is not None and len(ev.victims) > 1:
                ev.victims = ev.victims[:-1]  # one buffered page of the block left behind
            return ev

    with pytest.raises(flashbuf.PolicyContractError, match=r"is buffered in frame \d+ but not among the victims"):
        flashbuf.run(TRACE, LeavesOne, 40, device="bast")


def test_an_exception_in_a_policy_is_raised_with_where_it_happened():
    cls = type("Raises", (Broken,), {"mistake": "raises", "name": "raises"})
    with pytest.raises(ZeroDivisionError, match="my policy divided by zero") as e:
        flashbuf.run(TRACE, cls, 10, device="ideal")
    notes = getattr(e.value, "__notes__", [])
    assert any("raised by victims() at request" in n and "policy raises on trace" in n for n in notes), notes


def test_a_wrong_dirty_bit_is_caught_by_check():
    class ForgetsWrites(PyLru):
        name = "forgets"

        def is_dirty(self, frame):
            return False

    with pytest.raises(flashbuf.FlashbufError, match=r"policy dirty=false, buffer dirty=true"):
        flashbuf.run(TRACE, ForgetsWrites, 20, device="ideal", check=True)
    flashbuf.run(TRACE, ForgetsWrites, 20, device="ideal")  # unchecked, nobody asks


def test_bypass_writes_incoming_pages_through():
    class WriteAround(PyLru):
        """LRU that never buffers an incoming write on a miss once full."""

        name = "write-around"

        def victims(self, incoming):
            if incoming.is_write:
                return flashbuf.Evictions(victims=[], bypass=True)
            return super().victims(incoming)

    df = flashbuf.run(TRACE, WriteAround, 50, device="ideal")
    assert df.bypass_writes[0] > 0
    assert df.page_writes[0] == df.evict_writes[0] + df.bypass_writes[0] + df.flush_writes[0]


def test_a_policy_sees_every_event_once():
    class Counting(PyLru):
        name = "counting"
        calls = {"on_hit": 0, "on_insert": 0, "victims": 0}

        def on_hit(self, frame, access):
            Counting.calls["on_hit"] += 1
            super().on_hit(frame, access)

        def on_insert(self, frame, access):
            assert 0 <= frame < self.capacity
            Counting.calls["on_insert"] += 1
            super().on_insert(frame, access)

        def victims(self, incoming):
            Counting.calls["victims"] += 1
            return super().victims(incoming)

    df = flashbuf.run(TRACE, Counting, 100, device="ideal")
    assert Counting.calls == {
        "on_hit": df.hits[0],
        "on_insert": df.misses[0],
        "victims": df.misses[0] - 100,
    }


def test_the_abstract_methods_are_required():
    class Half(flashbuf.Policy):
        def on_hit(self, frame, access):
            pass

    with pytest.raises(TypeError, match="abstract"):
        flashbuf.run(TRACE, Half, 10)
    with pytest.raises(TypeError, match=r"returned a OrderedDict, not a flashbuf.Policy"):
        flashbuf.run(TRACE, lambda capacity: OrderedDict(), 10)

"""A block replica on disk: any byte range reads back exactly, each 64 KiB chunk checked
against its stored CRC32C; a flipped bit anywhere in the range read is caught."""

from __future__ import annotations

import os

import pytest
from hypothesis import given, settings, strategies as st

from hopshive.exceptions import CorruptReplica
from hopshive.namespace.blocks import CHECK_CHUNK, BlockStore

SIZE = 3 * CHECK_CHUNK + 1234
DATA = os.urandom(SIZE)


def stored(tmp_path_factory, pieces: list[int]) -> BlockStore:
    store = BlockStore(str(tmp_path_factory.mktemp("data")), "127.0.0.1:1")
    replica = store.replica_file(7)
    position, turn = 0, 0
    while position < SIZE:   # written in pieces of any size
        size = pieces[turn % len(pieces)]
        replica.write(DATA[position:position + size])
        position, turn = position + size, turn + 1
    assert replica.close() == SIZE
    return store


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(1, 100_000), min_size=1, max_size=4), st.integers(0, SIZE), st.integers(0, SIZE))
def test_any_range_reads_back_exactly(tmp_path_factory, pieces, start, count):
    store = stored(tmp_path_factory, pieces)
    count = min(count, SIZE - start)
    assert b"".join(store.read_local(7, start, count)) == DATA[start:start + count]
    assert store.sound(7, SIZE)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, SIZE - 1))
def test_a_flipped_byte_is_caught_by_reads_that_cover_it(tmp_path_factory, where):
    store = stored(tmp_path_factory, [CHECK_CHUNK])
    with open(store.path(7), "r+b") as handle:
        handle.seek(where)
        handle.write(bytes([DATA[where] ^ 1]))
    with pytest.raises(CorruptReplica):
        b"".join(store.read_local(7, max(0, where - 10), 20))
    assert not store.sound(7, SIZE)
    chunk = where // CHECK_CHUNK   # other chunks still read
    if chunk > 0:
        assert b"".join(store.read_local(7, 0, CHECK_CHUNK)) == DATA[:CHECK_CHUNK]


def test_missing_and_short_replicas_are_corrupt_and_legacy_ones_read(tmp_path_factory):
    store = stored(tmp_path_factory, [4096])
    with pytest.raises(CorruptReplica):
        list(store.read_local(8, 0, 10))
    os.truncate(store.path(7), SIZE - 1)
    assert not store.sound(7, SIZE)
    store.meta_path(7).unlink()   # a block written before checksums existed
    with open(store.path(7), "ab") as handle:
        handle.write(DATA[-1:])
    assert b"".join(store.read_local(7, 0, SIZE)) == DATA

"""HDFS's MD5-of-MD5-of-CRC32C checksum does not depend on how a block's bytes arrive."""

from __future__ import annotations

import hashlib
import struct

import crc32c
from hypothesis import given, strategies as st

from hopshive.namespace.blocks import BYTES_PER_CRC, FileChecksum


def reference(blocks: list[bytes], block_size: int) -> bytes:
    md5s = b""
    for data in blocks:
        crcs = b"".join(struct.pack(">I", crc32c.crc32c(data[i:i + BYTES_PER_CRC]))
                        for i in range(0, len(data), BYTES_PER_CRC))
        md5s += hashlib.md5(crcs).digest()
    per_block = block_size // BYTES_PER_CRC if len(blocks) > 1 else 0
    return struct.pack(">IQ", BYTES_PER_CRC, per_block) + hashlib.md5(md5s).digest()


@given(st.lists(st.binary(max_size=3000), min_size=1, max_size=3), st.lists(st.integers(1, 700), min_size=1))
def test_any_chunking_gives_the_checksum_of_the_whole_blocks(blocks, cuts):
    checksum = FileChecksum(2048, len(blocks))
    for data in blocks:
        checksum.start_block()
        position, turn = 0, 0
        while position < len(data):
            size = cuts[turn % len(cuts)]
            checksum.update(data[position:position + size])
            position, turn = position + size, turn + 1
    algorithm, value = checksum.result()
    assert value == reference(blocks, 2048)
    assert algorithm == f"MD5-of-{2048 // BYTES_PER_CRC if len(blocks) > 1 else 0}MD5-of-512CRC32C"

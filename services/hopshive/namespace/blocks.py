"""File data: blocks as files on the local disks of the namenodes that hold a replica of
them, and small files, whose whole content lives in the database (one inline pseudo-block).

A block is written to ``blk_<id>.tmp``, with a CRC32C of every 64 KiB chunk in
``blk_<id>.meta`` (as HDFS's .meta files), both fsynced and renamed into place when the
writer finishes, before the database learns of it.  Every read verifies the chunks it
returns against the .meta file and raises CorruptReplica on a mismatch: the caller then
reports the replica and reads another.  A block file with no database row is
therefore either being written or left over from a crash; ``sweep_orphans`` removes those
older than a grace period (the role of HDFS block reports).
"""

from __future__ import annotations

import hashlib
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

import crc32c

from ..exceptions import CorruptReplica
from .ids import IdAllocator

BYTES_PER_CRC = 512
CHECK_CHUNK = 1 << 16     # bytes per stored CRC32C of a replica (its .meta file)
READ_CHUNK = 1 << 20
IN_DATABASE = "database"     # the location of a small file's inline block


@dataclass(frozen=True)
class Block:
    block_id: int
    num_bytes: int
    location: str
    generation_stamp: int = 0
    data: bytes | None = None    # a small file's content (location IN_DATABASE); else on disk
    replicas: tuple[str, ...] = ()   # holders of a sound replica (addresses); empty for inline

    @property
    def inline(self) -> bool:
        return self.data is not None


class BlockStore:
    def __init__(self, data_dir: str, location: str):
        self.root = Path(data_dir) / "current"
        self.location = location
        self.root.mkdir(parents=True, exist_ok=True)

    def path(self, block_id: int) -> Path:
        return self.root / f"subdir{(block_id >> 8) & 0xFF:02x}" / f"blk_{block_id}"

    def writer(self, ids: IdAllocator, block_size: int, tail: Block | None = None,
               tail_bytes: Callable[[Block], Iterator[bytes]] | None = None,
               record_events: bool = False) -> "BlockWriter":
        return BlockWriter(self, ids, block_size, tail, tail_bytes, record_events)

    def holds(self, block: Block) -> bool:
        """Whether this store can read ``block`` (a small file's, or one on this disk)."""
        return block.inline or self.location in block.replicas

    def meta_path(self, block_id: int) -> Path:
        return self.path(block_id).with_suffix(".meta")

    def read(self, blocks: list[Block], offset: int, length: int | None) -> Iterator[bytes]:
        """The bytes [offset, offset+length) of the file made of ``blocks`` (all held here)."""
        for block, start, count in segments(blocks, offset, length):
            yield from self.read_block(block, start, count)

    def read_block(self, block: Block, start: int, count: int) -> Iterator[bytes]:
        """``count`` bytes of ``block`` from ``start``."""
        if block.inline:
            yield block.data[start:start + count]
            return
        yield from self.read_local(block.block_id, start, count)

    def read_local(self, block_id: int, start: int, count: int) -> Iterator[bytes]:
        """``count`` bytes of this disk's replica of ``block_id`` from ``start``, each 64 KiB
        chunk checked against its CRC before any of it is returned (CorruptReplica if not;
        a block from before checksums, with no .meta file, is read unchecked)."""
        try:
            handle = open(self.path(block_id), "rb")
        except FileNotFoundError:
            raise CorruptReplica(f"replica of block {block_id} on {self.location} is missing") from None
        with handle:
            try:
                crcs = self.meta_path(block_id).read_bytes()
            except FileNotFoundError:   # written before replicas had checksums: read as it is
                crcs = None
            index = start // CHECK_CHUNK
            handle.seek(index * CHECK_CHUNK)
            skip = start - index * CHECK_CHUNK
            while count:
                want = min(READ_CHUNK, -(-(skip + count) // CHECK_CHUNK) * CHECK_CHUNK)
                data = handle.read(want)
                view = memoryview(data)
                for at in range(0, len(data) if crcs is not None else 0, CHECK_CHUNK):
                    stored = crcs[(index + at // CHECK_CHUNK) * 4:(index + at // CHECK_CHUNK) * 4 + 4]
                    if len(stored) < 4 or struct.unpack(">I", stored)[0] != crc32c.crc32c(view[at:at + CHECK_CHUNK]):
                        raise CorruptReplica(f"replica of block {block_id} on {self.location} fails its checksum"
                                             f" at byte {(index * CHECK_CHUNK) + at}")
                index += len(data) // CHECK_CHUNK
                piece = data[skip:skip + count]
                if not piece:
                    raise CorruptReplica(f"replica of block {block_id} on {self.location} is shorter than recorded")
                skip = 0
                count -= len(piece)
                yield piece

    def replica_file(self, block_id: int) -> "_ReplicaFile":
        """A new replica of ``block_id`` sent by a peer: ``write`` it, then ``close`` (durable,
        in place) or ``discard``."""
        return _ReplicaFile(self, block_id)

    def sound(self, block_id: int, num_bytes: int) -> bool:
        """Whether this disk has a replica of ``block_id`` whose bytes match their checksums."""
        try:
            return sum(len(c) for c in self.read_local(block_id, 0, num_bytes)) == num_bytes
        except CorruptReplica:
            return False

    def delete(self, block_ids: list[int]) -> None:
        for block_id in block_ids:
            path = self.path(block_id)
            for path in (path, path.with_suffix(".tmp"), path.with_suffix(".meta"), path.with_suffix(".mtmp")):
                try:
                    path.unlink()
                except FileNotFoundError:
                    pass

    def block_ids_on_disk(self, older_than: float) -> Iterator[int]:
        """Ids of block files (finished or not) last modified before ``older_than``."""
        for subdir in self.root.iterdir():
            for entry in os.scandir(subdir):
                if entry.name.startswith("blk_") and entry.stat().st_mtime < older_than:
                    yield int(entry.name[4:].split(".")[0])

    def checksum(self, blocks: list[Block], block_size: int) -> tuple[str, bytes]:
        """HDFS's file checksum of a file whose blocks are all held here."""
        checksum = FileChecksum(block_size, len(blocks))
        for block in blocks:
            checksum.start_block()
            for chunk in self.read_block(block, 0, block.num_bytes):
                checksum.update(chunk)
        return checksum.result()


class _ReplicaFile:
    """One block replica being written: data to ``.tmp`` and chunk CRCs to ``.mtmp``; on
    close both are fsynced and renamed into place (the .meta first, so a finished block
    file always has its checksums)."""

    def __init__(self, store: BlockStore, block_id: int):
        self.store, self.block_id = store, block_id
        self.path = store.path(block_id)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.handle = open(self.path.with_suffix(".tmp"), "wb")
        self.crcs = bytearray()
        self.pending = b""
        self.length = 0

    def write(self, data) -> None:
        self.handle.write(data)
        self.length += len(data)
        view = memoryview(data)
        if self.pending:   # complete the chunk begun by the last write
            need = CHECK_CHUNK - len(self.pending)
            self.pending += bytes(view[:need])
            view = view[need:]
            if len(self.pending) < CHECK_CHUNK:
                return
            self.crcs += struct.pack(">I", crc32c.crc32c(self.pending))
            self.pending = b""
        whole = len(view) - len(view) % CHECK_CHUNK
        for at in range(0, whole, CHECK_CHUNK):
            self.crcs += struct.pack(">I", crc32c.crc32c(view[at:at + CHECK_CHUNK]))
        self.pending = bytes(view[whole:])

    def close(self) -> int:
        if self.pending:
            self.crcs += struct.pack(">I", crc32c.crc32c(self.pending))
        self.handle.flush()
        os.fsync(self.handle.fileno())
        self.handle.close()
        meta = self.path.with_suffix(".mtmp")
        with open(meta, "wb") as handle:
            handle.write(self.crcs)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(meta, self.path.with_suffix(".meta"))
        os.replace(self.path.with_suffix(".tmp"), self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
        return self.length

    def discard(self) -> None:
        if not self.handle.closed:
            self.handle.close()
        for suffix in (".tmp", ".mtmp"):
            try:
                self.path.with_suffix(suffix).unlink()
            except FileNotFoundError:
                pass


class FileChecksum:
    """HDFS's MD5-of-MD5-of-CRC32C file checksum, fed block by block with chunks of any size:
    a CRC32C per 512 bytes, an MD5 of each block's CRCs, an MD5 of those."""

    def __init__(self, block_size: int, block_count: int):
        self.crc_per_block = block_size // BYTES_PER_CRC if block_count > 1 else 0
        self.block_md5s = b""
        self.crcs: bytearray | None = None
        self.pending = b""

    def _end_block(self) -> None:
        if self.crcs is not None:
            if self.pending:
                self.crcs += struct.pack(">I", crc32c.crc32c(self.pending))
            self.block_md5s += hashlib.md5(self.crcs).digest()
        self.crcs, self.pending = None, b""

    def start_block(self) -> None:
        self._end_block()
        self.crcs = bytearray()

    def update(self, data: bytes) -> None:
        data = self.pending + bytes(data)
        whole = len(data) - len(data) % BYTES_PER_CRC
        for i in range(0, whole, BYTES_PER_CRC):
            self.crcs += struct.pack(">I", crc32c.crc32c(data[i:i + BYTES_PER_CRC]))
        self.pending = data[whole:]

    def result(self) -> tuple[str, bytes]:
        """(algorithm, bytes) as WebHDFS reports them."""
        self._end_block()
        algorithm = f"MD5-of-{self.crc_per_block}MD5-of-{BYTES_PER_CRC}CRC32C"
        return algorithm, struct.pack(">IQ", BYTES_PER_CRC, self.crc_per_block) + hashlib.md5(self.block_md5s).digest()


def segments(blocks: list[Block], offset: int, length: int | None) -> Iterator[tuple[Block, int, int]]:
    """(block, start within it, byte count) of each block that holds part of the file's
    bytes [offset, offset+length)."""
    end = sum(b.num_bytes for b in blocks) if length is None else offset + length
    start = 0
    for block in blocks:
        lo, hi = max(offset, start), min(end, start + block.num_bytes)
        if lo < hi:
            yield block, lo - start, hi - lo
        start += block.num_bytes
        if start >= end:
            return


class SmallFileWriter:
    """Keeps a file's bytes in memory while the whole file fits ``limit``; the first byte past
    it moves everything to blocks (``spill`` makes the BlockWriter).  ``initial``: the content
    of a small file being appended to.  ``finish`` returns the blocks written, or one inline
    block with the whole content when the file stayed small (none when it is empty)."""

    replaces_tail = False

    def __init__(self, limit: int, initial: bytes, spill: Callable[[], "BlockWriter"]):
        self.limit = limit
        self.buffer = bytearray(initial)
        self.spill = spill
        self.blocks: "BlockWriter | None" = None

    def write(self, data: bytes) -> None:
        if self.blocks is None and len(self.buffer) + len(data) <= self.limit:
            self.buffer += data
            return
        if self.blocks is None:
            self.blocks = self.spill()
            self.blocks.write(bytes(self.buffer))
            self.buffer = bytearray()
        self.blocks.write(data)

    def take_events(self) -> list[tuple]:
        return self.blocks.take_events() if self.blocks is not None else []

    def finish(self) -> list[Block]:
        if self.blocks is not None:
            return self.blocks.finish()
        return [Block(0, len(self.buffer), IN_DATABASE, data=bytes(self.buffer))] if self.buffer else []

    def abort(self) -> None:
        if self.blocks is not None:
            self.blocks.abort()


class BlockWriter:
    """Streams a file's bytes into new block files.  On append, the file's partial last
    block (``tail``, its bytes from ``tail_bytes``: this disk or another holder) is copied
    into a new block first, so the old one stays intact until the append commits."""

    def __init__(self, store: BlockStore, ids: IdAllocator, block_size: int, tail: Block | None,
                 tail_bytes: Callable[[Block], Iterator[bytes]] | None = None, record_events: bool = False):
        self.store, self.ids, self.block_size = store, ids, block_size
        self.blocks: list[Block] = []
        self._handle = None
        self._current: int | None = None
        self._written = 0
        # With record_events, what happened since take_events(), for a write pipeline to
        # forward to peers: ("open", block_id), ("data", block_id, bytes), ("close", block_id, length).
        self._events: list[tuple] | None = [] if record_events else None
        self.replaces_tail = tail is not None and tail.num_bytes < block_size
        if self.replaces_tail:
            self._open()
            for chunk in tail_bytes(tail):
                self._handle.write(chunk)
                self._event("data", self._current, bytes(chunk))
            self._written = tail.num_bytes

    def _event(self, *event) -> None:
        if self._events is not None:
            self._events.append(event)

    def take_events(self) -> list[tuple]:
        events, self._events = self._events or [], [] if self._events is not None else None
        return events

    def _open(self) -> None:
        self._current = self.ids.next()
        self._handle = _ReplicaFile(self.store, self._current)
        self._written = 0
        self._event("open", self._current)

    def _close_current(self) -> None:
        self._handle.close()
        location = self.store.location
        self.blocks.append(Block(self._current, self._written, location, replicas=(location,)))
        self._event("close", self._current, self._written)
        self._handle = self._current = None

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            if self._handle is None:
                self._open()
            room = self.block_size - self._written
            piece = view[:room]
            self._handle.write(piece)
            self._event("data", self._current, piece)
            self._written += len(piece)
            view = view[room:]
            if self._written == self.block_size:
                self._close_current()

    def finish(self) -> list[Block]:
        if self._handle is not None:
            self._close_current()
        return self.blocks

    def abort(self) -> None:
        if self._handle is not None:
            self._handle.discard()
            self.store.delete([self._current])
        self.store.delete([b.block_id for b in self.blocks])
        self.blocks = []

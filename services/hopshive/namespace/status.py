"""What clients are told about an inode (HDFS's FileStatus and ContentSummary)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FileStatus:
    path_suffix: str
    is_dir: bool
    length: int
    owner: str
    group: str
    permission: int
    access_time: int
    modification_time: int
    block_size: int
    replication: int
    file_id: int
    children_num: int
    under_construction: bool = False


@dataclass(frozen=True)
class ContentSummary:
    length: int
    file_count: int
    directory_count: int
    space_consumed: int

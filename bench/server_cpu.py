"""CPU time used by the local processes that serve a TCP port, from /proc (Linux).

On a shared 2-CPU host, wall-clock latency mostly measures who else is running; the CPU a
server burns per call does not. Every process holding the listening socket counts (a JVM,
or a pre-forked Python server's master and workers). The database's CPU is not included.
"""

from __future__ import annotations

import os
from pathlib import Path

_TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _listening_inodes(port: int) -> set[str]:
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, state, inode = fields[1], fields[3], fields[9]
            if state == "0A" and int(local.rsplit(":", 1)[1], 16) == port:
                inodes.add(inode)
    return inodes


def pids_listening(port: int) -> list[int]:
    """Local processes holding a socket listening on ``port`` (empty if none or not Linux)."""
    targets = {f"socket:[{inode}]" for inode in _listening_inodes(port)}
    pids = []
    if not targets:
        return pids
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if any(os.readlink(fd) in targets for fd in (proc / "fd").iterdir()):
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


class ServerCPU:
    """``seconds()``: user+system CPU of the processes serving ``host:port`` so far, or None
    when the server is not local (or cannot be read)."""

    def __init__(self, address: str):
        host, _, port = address.rpartition(":")
        local = host in ("127.0.0.1", "localhost", "::1", "0.0.0.0")
        self.pids = pids_listening(int(port)) if local else []

    def seconds(self) -> float | None:
        if not self.pids:
            return None
        total = 0
        for pid in self.pids:
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
            except OSError:
                return None  # a server process went away: no trustworthy figure
            fields = stat.rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
        return total / _TICK

"""POSIX-style permission checks, as the HDFS namenode does them."""

from __future__ import annotations

from ..exceptions import AccessDenied
from .inodes import Inode
from .users import Caller, UserDirectory

READ, WRITE, EXECUTE = 4, 2, 1
STICKY = 0o1000
_NAMES = {READ: "READ", WRITE: "WRITE", EXECUTE: "EXECUTE", READ | EXECUTE: "READ_EXECUTE",
          WRITE | EXECUTE: "WRITE_EXECUTE", READ | WRITE | EXECUTE: "ALL"}


class PermissionChecker:
    def __init__(self, users: UserDirectory):
        self.users = users

    def _bits(self, caller: Caller, inode: Inode) -> int:
        mode = inode.permission or 0
        if self.users.user_name(inode.user_id) == caller.name:
            return (mode >> 6) & 7
        if self.users.group_name(inode.group_id) in caller.groups:
            return (mode >> 3) & 7
        return mode & 7

    def check(self, caller: Caller, inode: Inode, access: int, path: str) -> None:
        """Raise AccessDenied unless ``caller`` has every bit of ``access`` on ``inode``."""
        if caller.superuser or (self._bits(caller, inode) & access) == access:
            return
        owner = self.users.user_name(inode.user_id)
        group = self.users.group_name(inode.group_id)
        kind = "d" if inode.is_dir else "-"
        raise AccessDenied(
            f"Permission denied: user={caller.name}, access={_NAMES.get(access, access)}, "
            f"inode=\"{path}\":{owner}:{group}:{kind}{format_mode(inode.permission or 0)}")

    def check_traverse(self, caller: Caller, ancestors: list[Inode], path: str) -> None:
        for inode in ancestors:
            if inode.is_dir:
                self.check(caller, inode, EXECUTE, path)

    def check_sticky(self, caller: Caller, parent: Inode, child: Inode, path: str) -> None:
        """In a sticky directory only the owner of an entry (or of the directory) may remove it."""
        if caller.superuser or not (parent.permission or 0) & STICKY:
            return
        if caller.name in (self.users.user_name(parent.user_id), self.users.user_name(child.user_id)):
            return
        raise AccessDenied(f"Permission denied by sticky bit: user={caller.name}, path=\"{path}\", "
                           f"parent owner={self.users.user_name(parent.user_id)}")

    def check_owner(self, caller: Caller, inode: Inode, path: str) -> None:
        if not caller.superuser and self.users.user_name(inode.user_id) != caller.name:
            raise AccessDenied(f"Permission denied: user={caller.name} is not the owner of inode={path}")


def format_mode(mode: int) -> str:
    """rwxr-xr-x style, with t/T for the sticky bit."""
    text = "".join(("r" if mode & (4 << s) else "-") + ("w" if mode & (2 << s) else "-")
                   + ("x" if mode & (1 << s) else "-") for s in (6, 3, 0))
    if mode & STICKY:
        text = text[:-1] + ("t" if mode & 1 else "T")
    return text

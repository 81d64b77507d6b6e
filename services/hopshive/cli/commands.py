"""The dfs shell commands.  Each works through every path it is given, reports a failure as
``hopshive-dfs: <command>: <message>`` and goes on; the exit status is 1 if any failed."""

from __future__ import annotations

import errno
import os
import posixpath
import sys
from typing import Callable, Iterator
from urllib.parse import urlsplit

from .client import DfsError, WebHdfsClient, not_found
from .formats import human, is_dir, ls_lines, parse_mode, permission, stat_line

COPYING = "._COPYING_"


def display_join(base: str, name: str) -> str:
    """How a child of a path argument is shown (relative stays relative, as in `hdfs dfs`)."""
    if not base:
        return name
    return base + name if base.endswith("/") else f"{base}/{name}"


FSCK_LINES = [("Number of data-nodes", "dataNodes"), ("Total size", "totalSize"),
              ("Total dirs", "totalDirs"), ("Total files", "totalFiles"),
              ("Total blocks (validated)", "totalBlocks"),
              ("Minimally replicated blocks", "minimallyReplicatedBlocks"),
              ("Over-replicated blocks", "overReplicatedBlocks"),
              ("Under-replicated blocks", "underReplicatedBlocks"),
              ("Default replication factor", "defaultReplication"),
              ("Average block replication", "averageBlockReplication"),
              ("Missing blocks", "missingBlocks"), ("Corrupt blocks", "corruptBlocks"),
              ("Corrupt replicas", "corruptReplicas")]


class Shell:
    def __init__(self, client: WebHdfsClient, prog: str = "hopshive-dfs"):
        self.client, self.prog = client, prog
        self.failures = 0
        self._home: str | None = None

    # --------------------------------------------------------------- helpers
    def absolute(self, arg: str) -> str:
        """The absolute path of an argument: URIs lose scheme and authority, relative paths
        are taken from the home directory, '.' and '..' are resolved."""
        path = urlsplit(arg).path if "://" in arg else arg
        if not path.startswith("/"):
            if self._home is None:
                self._home = self.client.home()
            path = f"{self._home}/{path}"
        return "/" + posixpath.normpath(path).lstrip("/") if path.strip("/") else "/"

    def fail(self, command: str, message: str) -> None:
        print(f"{self.prog}: {command}: {message}", file=sys.stderr)
        self.failures += 1

    def each(self, command: str, args: list[str], action: Callable[[str, str], None]) -> None:
        """``action(argument, absolute path)`` for every argument, reporting failures."""
        for arg in args:
            try:
                action(arg, self.absolute(arg))
            except DfsError as exc:
                self.fail(command, exc.describe(arg))
            except OSError as exc:  # the local side of get
                self.fail(command, f"`{exc.filename}': {exc.strerror}")

    def existing(self, arg: str, path: str) -> dict:
        status = self.client.status(path)
        if status is None:
            raise not_found(path)
        return status

    def walk(self, path: str, status: dict) -> Iterator[tuple[str, dict]]:
        """``path`` and, below a directory, everything in it (pre-order)."""
        yield path, status
        if is_dir(status):
            for child in self.client.list(path):
                yield from self.walk(display_join(path, child["pathSuffix"]), child)

    def ensure(self, condition: bool, message: str) -> None:
        if not condition:
            raise DfsError(message)

    # -------------------------------------------------------------- listing
    def ls(self, args) -> None:
        def one(arg: str, path: str) -> None:
            status = self.existing(arg, path)
            if not is_dir(status) or args.d:
                print("\n".join(ls_lines([(arg or ".", status)])))
            elif args.R:
                self._ls_tree(arg, path)
            else:
                entries = [(display_join(arg, s["pathSuffix"]), s) for s in self.client.list(path)]
                print(f"Found {len(entries)} items")
                for line in ls_lines(entries):
                    print(line)
        self.each("ls", args.paths or [""], one)

    def _ls_tree(self, shown: str, path: str) -> None:
        entries = [(display_join(shown, s["pathSuffix"]), s) for s in self.client.list(path)]
        for (child_shown, status), line in zip(entries, ls_lines(entries)):
            print(line)
            if is_dir(status):
                self._ls_tree(child_shown, display_join(path, status["pathSuffix"]))

    def du(self, args) -> None:
        def one(arg: str, path: str) -> None:
            status = self.existing(arg, path)
            if args.s or not is_dir(status):
                targets = [(arg or ".", path)]
            else:
                targets = [(display_join(arg, s["pathSuffix"]), display_join(path, s["pathSuffix"]))
                           for s in self.client.list(path)]
            rows = []
            for shown, target in targets:
                summary = self.client.content_summary(target)
                rows.append((human(summary["length"], args.h), human(summary["spaceConsumed"], args.h), shown))
            width = max((len(r[0]) for r in rows), default=0)
            consumed = max((len(r[1]) for r in rows), default=0)
            for size, space, shown in rows:
                print(f"{size:<{width}}  {space:<{consumed}}  {shown}")
        self.each("du", args.paths or [""], one)

    def stat(self, args) -> None:
        fmt, paths = "%y", list(args.args)
        if len(paths) > 1 and "%" in paths[0]:
            fmt = paths.pop(0)
        self.each("stat", paths, lambda arg, path: print(stat_line(fmt, path, self.existing(arg, path))))

    def cat(self, args) -> None:
        def one(arg: str, path: str) -> None:
            self.ensure(not is_dir(self.existing(arg, path)), f"`{arg}': Is a directory")
            for chunk in self.client.read(path):
                sys.stdout.buffer.write(chunk)
            sys.stdout.buffer.flush()
        self.each("cat", args.paths, one)

    # ------------------------------------------------------------- changing
    def mkdir(self, args) -> None:
        def one(arg: str, path: str) -> None:
            if not args.p:
                self.ensure(self.client.status(path) is None, f"`{arg}': File exists")
                parent = self.client.status(posixpath.dirname(path))
                self.ensure(parent is not None, f"`{arg}': No such file or directory")
                self.ensure(is_dir(parent), f"`{arg}': Not a directory")
            self.client.mkdirs(path)
        self.each("mkdir", args.paths, one)

    def rm(self, args) -> None:
        def one(arg: str, path: str) -> None:
            status = self.client.status(path)
            if status is None:
                if not args.f:
                    self.fail("rm", f"`{arg}': No such file or directory")
                return
            self.ensure(not is_dir(status) or args.r, f"`{arg}': Is a directory")
            trash = self.client.trash_root(path)
            if args.skipTrash or path == trash or path.startswith(trash + "/"):
                self.ensure(self.client.delete(path, recursive=args.r), f"`{arg}': could not be deleted")
                print(f"Deleted {arg}")
            else:
                self.ensure(self.client.delete(path, recursive=args.r, skip_trash=False),
                            f"`{arg}': could not be moved to the trash")
                print(f"Moved: '{path}' to trash at: {trash}/Current{path}")
        self.each("rm", args.paths, one)

    def mv(self, args) -> None:
        target = self.absolute(args.target)
        destination = self.client.status(target)
        into = destination is not None and is_dir(destination)
        if len(args.sources) > 1 and not into:
            return self.fail("mv", f"`{args.target}': Is not a directory")

        def one(arg: str, path: str) -> None:
            self.existing(arg, path)
            final = display_join(target, posixpath.basename(path)) if into else target
            shown = display_join(args.target, posixpath.basename(path)) if into else args.target
            self.ensure(self.client.status(final) is None, f"`{shown}': File exists")
            self.ensure(final != path and not final.startswith(path + "/"),
                        f"`{arg}' to `{shown}': is a subdirectory of itself")
            if not self.client.rename(path, final):
                parent = self.client.status(posixpath.dirname(final))
                self.ensure(parent is not None, f"`{shown}': No such file or directory")
                raise DfsError(f"`{arg}' to `{shown}': Input/output error")
        self.each("mv", args.sources, one)

    def chmod(self, args) -> None:
        def one(arg: str, path: str) -> None:
            root = self.existing(arg, path)
            for each, status in (self.walk(path, root) if args.R else [(path, root)]):
                try:
                    mode = parse_mode(args.mode, permission(status), is_dir(status))
                except ValueError as exc:
                    raise DfsError(str(exc)) from None
                self.client.set_permission(each, mode)
        self.each("chmod", args.paths, one)

    def chown(self, args) -> None:
        owner, _, group = args.owner.partition(":")
        if not owner and not group:
            return self.fail("chown", f"'{args.owner}' does not match expected pattern for [owner][:group].")

        def one(arg: str, path: str) -> None:
            root = self.existing(arg, path)
            for each, _ in (self.walk(path, root) if args.R else [(path, root)]):
                self.client.set_owner(each, owner, group)
        self.each("chown", args.paths, one)

    def fsck(self, args) -> None:
        """HDFS fsck's summary; exit status 1 when the path is CORRUPT (missing blocks)."""
        path = self.absolute(args.path or "/")
        try:
            report = self.client.fsck(path)
        except DfsError as exc:
            return self.fail("fsck", exc.describe(path))
        print(f"Status: {report['status']}")
        for label, key in FSCK_LINES:
            print(f" {label}:\t{report[key]}" + (" B" if key == "totalSize" else ""))
        if report["missingBlockIds"]:
            print(" Missing block ids:\t" + ", ".join(f"blk_{b}" for b in report["missingBlockIds"]))
        print(f"\nThe filesystem under path '{path}' is {report['status']}")
        if report["status"] != "HEALTHY":
            self.failures += 1

    def setrep(self, args) -> None:
        if not (args.replication.isascii() and args.replication.isdigit()):
            return self.fail("setrep", f"`{args.replication}': the replication must be a number")
        replication = int(args.replication)

        def one(arg: str, path: str) -> None:
            if self.client.set_replication(path, replication):
                print(f"Replication {replication} set: {arg}")
            else:
                self.fail("setrep", f"`{arg}': is a directory (set the replication of its files)")
        self.each("setrep", args.paths, one)

    def expunge(self, args) -> None:
        try:
            for item in self.client.expunge():
                print(f"Deleted trash checkpoint: {item}" if item.startswith("/") else "Created trash checkpoint")
        except DfsError as exc:
            self.fail("expunge", exc.describe())

    # ------------------------------------------------------------- copying
    def put(self, args) -> None:
        target = self.absolute(args.remote)
        destination = self.client.status(target)
        into = destination is not None and is_dir(destination)
        if len(args.local) > 1 and not into:
            return self.fail("put", f"`{args.remote}': Is not a directory")
        for source in args.local:
            name = "-" if source == "-" else os.path.basename(source.rstrip("/"))
            final = display_join(target, name) if into else target
            shown = display_join(args.remote, name) if into else args.remote
            try:
                self._upload(source, final, shown, args.f)
            except DfsError as exc:
                self.fail("put", exc.describe(shown))
            except OSError as exc:
                self.fail("put", f"`{exc.filename or source}': {exc.strerror}")

    def _upload(self, source: str, path: str, shown: str, force: bool) -> None:
        if source != "-" and not os.path.exists(source):
            raise FileNotFoundError(errno.ENOENT, os.strerror(errno.ENOENT), source)
        existing = self.client.status(path)
        if os.path.isdir(source):
            self.ensure(existing is None or is_dir(existing), f"`{shown}': File exists")
            self.client.mkdirs(path)
            for name in sorted(os.listdir(source)):
                self._upload(os.path.join(source, name), f"{path}/{name}", f"{shown}/{name}", force)
            return
        self.ensure(existing is None or (force and not is_dir(existing)), f"`{shown}': File exists")
        temporary = path + COPYING
        with (open(source, "rb") if source != "-" else os.fdopen(os.dup(0), "rb")) as handle:
            try:
                self.client.create(temporary, handle, overwrite=True)
                if existing is not None:
                    self.client.delete(path, recursive=False)
                self.ensure(self.client.rename(temporary, path), f"`{shown}': could not be renamed into place")
            except BaseException:
                try:
                    self.client.delete(temporary, recursive=False)
                except DfsError:
                    pass  # the original failure is the one to report
                raise

    def get(self, args) -> None:
        local_is_dir = os.path.isdir(args.local)
        if len(args.remote) > 1 and not local_is_dir:
            return self.fail("get", f"`{args.local}': Is not a directory")

        def one(arg: str, path: str) -> None:
            status = self.existing(arg, path)
            name = posixpath.basename(path) or "root"
            self._download(path, status, os.path.join(args.local, name) if local_is_dir else args.local, args.f)
        self.each("get", args.remote, one)

    def _download(self, path: str, status: dict, local: str, force: bool) -> None:
        if is_dir(status):
            os.makedirs(local, exist_ok=True)
            for child in self.client.list(path):
                name = child["pathSuffix"]
                self._download(f"{path}/{name}", child, os.path.join(local, name), force)
            return
        self.ensure(force or not os.path.exists(local), f"`{local}': File exists")
        temporary = local + COPYING
        try:
            with open(temporary, "wb") as handle:
                for chunk in self.client.read(path):
                    handle.write(chunk)
            os.replace(temporary, local)
        except BaseException:
            if os.path.exists(temporary):
                os.unlink(temporary)
            raise

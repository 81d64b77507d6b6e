"""A small real disk to fill: an ext4 file system on a loop device of this machine, mounted on
this machine or inside one of our cluster containers, so that node_exporter there reports a
file system the scenario can fill without touching any disk a service uses.

A container cannot open the loop device itself (docker's device rules), so the mount is made
by a process of this machine entering the container's mount namespace (nsenter): the
container's processes then only see a mounted file system, which needs no device access."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

SIZE = 64 << 20         # bytes: ext4's smallest comfortable size, and quick to make
MOUNTPOINT = "/srv/hopshive-test-disk"
DEVICE_NODE = "/dev/hopshive-test-disk"     # inside a container: the loop device's node
LEFT_FREE = 2 << 20     # bytes left free when filled: about 97 % used


def usable() -> str | None:
    """None when this machine can make and mount a test disk, else why not."""
    if os.geteuid() != 0:
        return "making a test disk needs root on this machine"
    missing = [tool for tool in ("losetup", "mkfs.ext4", "nsenter", "mount", "fallocate") if not shutil.which(tool)]
    if missing:
        return f"making a test disk needs {', '.join(missing)} on this machine"
    if not os.path.exists("/dev/loop-control"):
        return "this machine has no loop devices (/dev/loop-control)"
    return None


def _run(*command: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise AssertionError(f"{' '.join(command)} failed ({done.returncode}): {done.stdout}{done.stderr}")
    return done.stdout.strip()


class TestDisk:
    """The disk, made by ``attach`` and taken away, with its image, by ``detach``."""

    __test__ = False    # not a pytest class

    def __init__(self, container: str | None = None):
        self.container = container
        self.image: str | None = None
        self.device: str | None = None
        self.node: str | None = None     # the device node made in the container
        self.mounted = False

    def __repr__(self) -> str:
        return f"{self.container or 'localhost'}:{MOUNTPOINT}"

    def _in_host(self, *command: str) -> str:
        """``command`` in the mount namespace of the container (or of this machine)."""
        if self.container is None:
            return _run(*command)
        pid = _run("docker", "inspect", "--format", "{{.State.Pid}}", self.container)
        return _run("nsenter", "--target", pid, "--mount", "--", *command)

    def attach(self) -> None:
        fd, self.image = tempfile.mkstemp(prefix="hopshive-test-disk-", suffix=".img", dir="/var/tmp")
        os.ftruncate(fd, SIZE)
        os.close(fd)
        _run("mkfs.ext4", "-q", "-F", self.image)
        self.device = _run("losetup", "--find", "--show", self.image)
        node = self.device
        if self.container is not None:
            number = os.stat(self.device).st_rdev
            self._in_host("mknod", DEVICE_NODE, "b", str(os.major(number)), str(os.minor(number)))
            node = self.node = DEVICE_NODE
        self._in_host("mkdir", "-p", MOUNTPOINT)
        self._in_host("mount", node, MOUNTPOINT)
        self.mounted = True

    def fill(self) -> None:
        """Everything but LEFT_FREE bytes of what is available, in one preallocated file."""
        available = int(self._in_host("df", "--block-size=1", "--output=avail", MOUNTPOINT).split()[-1])
        self._in_host("fallocate", "--length", str(available - LEFT_FREE), f"{MOUNTPOINT}/fill")

    def detach(self) -> None:
        """Unmount and remove whatever ``attach`` made, as far as it got."""
        try:
            if self.mounted:
                self._in_host("umount", MOUNTPOINT)
                self._in_host("rmdir", MOUNTPOINT)
                self.mounted = False
            if self.node:
                self._in_host("rm", "-f", self.node)
                self.node = None
            if self.device:
                _run("losetup", "--detach", self.device)
                self.device = None
        finally:
            if self.image:
                os.unlink(self.image)
                self.image = None

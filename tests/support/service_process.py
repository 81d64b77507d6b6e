"""A HopsHive service as a real subprocess for component tests: started with its
configuration file, polled healthy with a deadline, stopped with SIGTERM (which it must obey)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import yaml

from tests.support.polling import wait_until


class ServiceProcess:
    """``python -m MODULE [ARGS] --config FILE`` in its own process group."""

    module = ""
    args: tuple = ()

    def __init__(self, base: Path, config: dict, start_deadline: float = 60.0, name: str = "service"):
        self.base = base
        base.mkdir(parents=True, exist_ok=True)
        self.config_path = base / f"{name}.yaml"
        self.config_path.write_text(yaml.safe_dump(config))
        self.log_path = base / f"{name}.log"
        self.start_deadline = start_deadline
        self.process: subprocess.Popen | None = None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"

    def healthy(self) -> bool:
        raise NotImplementedError

    def _probe(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.module} exited with {self.process.returncode}:\n{self.log_tail()}")
        return self.healthy()

    def spawn(self):
        """Start the process without waiting for it to be healthy."""
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", self.module, "--config", str(self.config_path), *self.args],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        return self

    def start(self):
        self.spawn()
        wait_until(self._probe, self.start_deadline, lambda _: f"{self.module} never became healthy:\n{self.log_tail()}")
        return self

    def kill(self) -> None:
        """kill -9 of its whole process group."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self, grace: float = 30.0) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            raise AssertionError(f"{self.module} ignored SIGTERM:\n{self.log_tail()}")

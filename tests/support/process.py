"""A service run as ``python -m <module> --config FILE`` in its own session, with its log in
a file, started until its health probe (``python -m <probe> --port N``) answers."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from tests.support.polling import wait_until


class ServiceProcess:
    name = "service"
    module = ""
    probe = ""
    start_timeout = 60.0

    def __init__(self, base: Path, port: int, config_path: Path):
        self.base, self.port, self.config_path = base, port, config_path
        self.log_path = base / f"{self.name}.log"
        self.process: subprocess.Popen | None = None

    def log_tail(self, chars: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except FileNotFoundError:
            return "(no log)"

    def _healthy(self) -> bool:
        if self.process.poll() is not None:
            raise AssertionError(f"{self.name} exited with {self.process.returncode}:\n{self.log_tail()}")
        return subprocess.run([sys.executable, "-m", self.probe, "--port", str(self.port), "--timeout", "2"],
                              capture_output=True).returncode == 0

    def start(self):
        with open(self.log_path, "ab") as log:
            self.process = subprocess.Popen([sys.executable, "-m", self.module, "--config", str(self.config_path)],
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        wait_until(self._healthy, self.start_timeout, lambda _: f"{self.name} never became healthy:\n{self.log_tail()}")
        return self

    def kill(self) -> None:
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self, grace: float = 20.0) -> int:
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(grace)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            raise AssertionError(f"{self.name} ignored SIGTERM:\n{self.log_tail()}")

"""An operation's progress as HiveServer2 reports it (TProgressUpdateResp, asked for with
``getProgressUpdate`` in GetOperationStatus): one row per Spark stage of the operation's job
group, in the shape of Hive on Spark's progress table, and the share of tasks done."""

from __future__ import annotations

from dataclasses import dataclass

from impala_thrift_gen.TCLIService import ttypes as t

HEADER = ["STAGES", "ATTEMPT", "STATUS", "TOTAL", "COMPLETED", "RUNNING", "PENDING", "FAILED"]


@dataclass(frozen=True)
class StageProgress:
    """A stage's task counts, as Spark's status tracker gives them."""

    stage: int
    attempt: int
    total: int
    completed: int
    running: int
    failed: int

    @property
    def status(self) -> str:
        if self.total and self.completed >= self.total:
            return "FINISHED"
        return "RUNNING" if self.running or self.completed else "PENDING"

    def row(self) -> list[str]:
        pending = max(self.total - self.completed - self.running, 0)
        return [f"Stage-{self.stage}", str(self.attempt), self.status, str(self.total), str(self.completed),
                str(self.running), str(pending), str(self.failed)]


def progress_update(stages: list[StageProgress] | None, finished: bool, started: int) -> t.TProgressUpdateResp:
    """``stages``: None when the engine could not say (its status is then NOT_AVAILABLE);
    ``finished``: the operation has ended; ``started``: its start, ms since the epoch."""
    if stages is None:
        return t.TProgressUpdateResp(headerNames=HEADER, rows=[], progressedPercentage=0.0,
                                     status=t.TJobExecutionStatus.NOT_AVAILABLE, footerSummary="", startTime=started)
    total = sum(stage.total for stage in stages)
    done = sum(min(stage.completed, stage.total) for stage in stages)
    share = 1.0 if finished and not total else (done / total if total else 0.0)
    status = t.TJobExecutionStatus.COMPLETE if finished else t.TJobExecutionStatus.IN_PROGRESS
    ended = sum(stage.status == "FINISHED" for stage in stages)
    return t.TProgressUpdateResp(headerNames=HEADER, rows=[stage.row() for stage in stages],
                                 progressedPercentage=share, status=status,
                                 footerSummary=f"STAGES: {ended:02d}/{len(stages):02d}", startTime=started)

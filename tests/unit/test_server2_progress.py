"""server2's progress report (TProgressUpdateResp) from Spark's stage task counts."""

from __future__ import annotations

from impala_thrift_gen.TCLIService import ttypes as t

from hopshive.server2.progress import HEADER, StageProgress, progress_update


def test_stages_become_rows_and_the_share_of_tasks_done():
    stages = [StageProgress(0, 0, 10, 10, 0, 0), StageProgress(1, 1, 30, 5, 2, 1), StageProgress(2, 0, 10, 0, 0, 0)]
    update = progress_update(stages, finished=False, started=1234)
    assert update.headerNames == HEADER
    assert update.rows == [["Stage-0", "0", "FINISHED", "10", "10", "0", "0", "0"],
                           ["Stage-1", "1", "RUNNING", "30", "5", "2", "23", "1"],
                           ["Stage-2", "0", "PENDING", "10", "0", "0", "10", "0"]]
    assert update.progressedPercentage == 15 / 50
    assert update.status == t.TJobExecutionStatus.IN_PROGRESS
    assert (update.footerSummary, update.startTime) == ("STAGES: 01/03", 1234)


def test_an_ended_operation_without_jobs_is_complete():
    update = progress_update([], finished=True, started=1)
    assert (update.progressedPercentage, update.status, update.rows) == (1.0, t.TJobExecutionStatus.COMPLETE, [])


def test_an_engine_that_cannot_say_reports_not_available():
    update = progress_update(None, finished=False, started=1)
    assert update.status == t.TJobExecutionStatus.NOT_AVAILABLE and update.progressedPercentage == 0.0

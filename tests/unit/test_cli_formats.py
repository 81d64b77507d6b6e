"""Text formats of hopshive-dfs: modes, ls lines, sizes, stat formats."""

from __future__ import annotations

import pytest

from hopshive.cli.client import RemoteError
from hopshive.cli.formats import human, ls_lines, mode_string, parse_mode, stat_line


def status(**overrides) -> dict:
    base = {"type": "FILE", "permission": "644", "owner": "alice", "group": "staff", "length": 5,
            "replication": 1, "blockSize": 134217728, "modificationTime": 1_700_000_000_000,
            "accessTime": 1_700_000_100_000, "pathSuffix": "f"}
    return {**base, **overrides}


@pytest.mark.parametrize("mode,is_dir,text", [
    (0o755, True, "drwxr-xr-x"), (0o644, False, "-rw-r--r--"), (0o1777, True, "drwxrwxrwt"),
    (0o1770, True, "drwxrwx--T"), (0, False, "----------"),
])
def test_mode_string(mode, is_dir, text):
    assert mode_string(mode, is_dir) == text


@pytest.mark.parametrize("text,current,directory,expected", [
    ("755", 0o600, False, 0o755), ("1777", 0, True, 0o1777), ("0", 0o777, False, 0),
    ("u+x", 0o644, False, 0o744), ("go-w", 0o777, True, 0o755), ("a=r", 0o777, False, 0o444),
    ("u=rwx,g=rx,o=", 0o000, True, 0o750), ("+t", 0o777, True, 0o1777), ("o-t", 0o1777, True, 0o777),
    ("a+X", 0o644, True, 0o755), ("a+X", 0o644, False, 0o644), ("a+X", 0o744, False, 0o755),
    ("-w", 0o666, False, 0o444),
])
def test_parse_mode(text, current, directory, expected):
    assert parse_mode(text, current, directory) == expected


@pytest.mark.parametrize("text", ["rwx", "8", "77777", "u+q", "z+x", "u+x,,", ""])
def test_invalid_modes(text):
    with pytest.raises(ValueError, match="does not match the expected pattern"):
        parse_mode(text, 0o644, False)


@pytest.mark.parametrize("size,readable,text", [
    (0, True, "0"), (1023, True, "1023"), (1024, True, "1.0 K"), (1536, True, "1.5 K"),
    (5 * 1024 ** 3, True, "5.0 G"), (123456789, False, "123456789"),
])
def test_human(size, readable, text):
    assert human(size, readable) == text


def test_stat_line_expands_every_directive():
    line = stat_line("%n|%b|%F|%u|%g|%a|%A|%o|%r|%Y|%X|%y|%x|%%|%q", "/a/f", status())
    assert line == ("f|5|regular file|alice|staff|644|rw-r--r--|134217728|1|1700000000000|1700000100000"
                    "|2023-11-14 22:13:20|2023-11-14 22:15:00|%|%q")
    assert stat_line("%F %n", "/", status(type="DIRECTORY", pathSuffix="")) == "directory /"


def test_ls_lines_align_columns_and_show_dashes_for_directories():
    lines = ls_lines([("/d", status(type="DIRECTORY", permission="755", length=0, owner="hdfs")),
                      ("/f", status(length=123456, group="supergroup", replication=3))])
    assert lines[0].split()[:5] == ["drwxr-xr-x", "-", "hdfs", "staff", "0"]
    assert lines[1].split()[:5] == ["-rw-r--r--", "3", "alice", "supergroup", "123456"]
    assert lines[0].index("/d") == lines[1].index("/f")  # the columns line up
    assert ls_lines([]) == []


@pytest.mark.parametrize("exception,expected", [
    ("FileNotFoundException", "`/x': No such file or directory"),
    ("FileAlreadyExistsException", "`/x': File exists"),
    ("PathIsNotEmptyDirectoryException", "`/x': Directory is not empty"),
    ("AccessControlException", "Permission denied: user=bob"),
])
def test_remote_errors_read_like_hdfs_dfs(exception, expected):
    error = RemoteError(exception, "Permission denied: user=bob" if "Access" in exception else "detail", 403)
    assert error.describe("/x") == expected

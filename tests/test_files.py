"""The one rule for every file jevalkit reads and writes (issue 53, jevalkit.files): what is
refused in one line, what is never waited on, what is never written through, and that an
interrupted write leaves the old file whole."""

from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from hostile_files import null_device

from jevalkit.files import check_output, read_file, read_stream, read_text, write_file


class Refused(Exception):
    pass


@pytest.fixture
def place(tmp_path):
    (tmp_path / "folder").mkdir()
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "a-file").write_text("x")
    (tmp_path / "victim.txt").write_text("precious")
    return tmp_path


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("fifo", "not a regular file (a FIFO); give a file"),
        ("/dev/zero", "not a regular file (a character device)"),
        ("folder", "is a folder, not a file"),
        ("missing", "no such file"),
        ("a-file/below", "a parent of this path is a file"),
        ("x" * 300, "a name in this path is 300 bytes long, over the 255"),
        ("/proc/self/mem", "cannot read it (Input/output error)"),
        ("a\0b", "a NUL character cannot be in a file name"),
        ("", "empty; give a path"),
    ],
)
def test_what_cannot_be_read_is_one_line_never_a_wait(place, name, words):
    path = name if name.startswith("/") or not name else place / name
    with pytest.raises(Refused) as caught:
        read_file(path, Refused, max_bytes=1000)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_a_file_over_its_bound_or_not_utf8_is_refused(tmp_path):
    (tmp_path / "big").write_bytes(b"x" * 2000)
    with pytest.raises(Refused, match="larger than"):
        read_file(tmp_path / "big", Refused, max_bytes=1000)
    (tmp_path / "latin").write_bytes(b"caf\xe9")
    with pytest.raises(Refused, match=r"not UTF-8 text \(byte 3\)"):
        read_text(tmp_path / "latin", Refused, max_bytes=1000)
    (tmp_path / "bom").write_bytes(b"\xef\xbb\xbfok")
    assert read_text(tmp_path / "bom", Refused, max_bytes=1000) == "ok"


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("device", "not a regular file (a character device)"),
        ("fifo", "not a regular file (a FIFO)"),
        ("folder", "is a folder; give a file name"),
        ("a-file/out.json", "a-file is a file, not a folder"),
        ("x" * 300, "over the 255 a file system allows"),
    ],
)
def test_what_cannot_be_written_is_refused_before_anything_is_written(place, name, words):
    path = place / name
    if name == "device" and null_device(place) is None:
        pytest.skip("making a device node needs root; check_output('/dev/null') is checked below")
    path = place / "null-device" if name == "device" else path
    before = sorted(p.name for p in place.iterdir())
    for attempt in (check_output, lambda p, e: write_file(p, "new", e)):
        with pytest.raises(Refused, match=re.escape(words)):
            attempt(path, Refused)
    assert sorted(p.name for p in place.iterdir()) == before  # no temporary file left
    if name == "device":
        assert path.is_char_device()


@pytest.mark.parametrize("device", ["/dev/null", "/dev/full"])
def test_the_systems_devices_are_refused_as_outputs(device):
    # checked only: never handed to a writer here, so a broken rule cannot replace them
    with pytest.raises(Refused, match=re.escape("not a regular file (a character device)")):
        check_output(device, Refused)


def test_a_symlink_is_replaced_never_written_through(place):
    link = place / "out.json"
    link.symlink_to(place / "victim.txt")
    write_file(link, "new", Refused)
    assert (place / "victim.txt").read_text() == "precious"
    assert not link.is_symlink() and link.read_text() == "new"
    # a link to a device is replaced too: the device is never opened
    (place / "dev").symlink_to("/dev/null")
    write_file(place / "dev", "x", Refused)
    assert (place / "dev").read_text() == "x"


def test_a_results_file_alone_is_written_where_its_link_points(place):
    link = place / "r.jsonl"
    link.symlink_to(place / "victim.txt")
    write_file(link, "rows", Refused, follow_link=True)
    assert link.is_symlink() and (place / "victim.txt").read_text() == "rows"
    (place / "to-dev").symlink_to("/dev/full")
    with pytest.raises(Refused, match="character device"):
        write_file(place / "to-dev", "x", Refused, follow_link=True)


def test_missing_folders_are_made_and_the_mode_is_a_plain_files(tmp_path):
    out = write_file(tmp_path / "new" / "deeper" / "f.txt", b"ok", Refused)
    assert out.read_bytes() == b"ok" and oct(out.stat().st_mode & 0o777) == "0o644"


def test_a_write_the_disk_refuses_keeps_the_old_file_and_leaves_no_temporary(tmp_path):
    # the file-size limit stands in for a full disk: the write fails part way
    (tmp_path / "out.txt").write_text("old")
    script = textwrap.dedent(
        f"""
        import resource, signal, sys
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))
        from jevalkit.files import write_file
        class Refused(Exception):
            pass
        try:
            write_file({str(tmp_path / "out.txt")!r}, b"x" * 100_000, Refused)
        except Refused as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert "cannot write the file (File too large)" in out.stdout, out.stdout + out.stderr
    assert "an earlier file there is kept" in out.stdout
    assert (tmp_path / "out.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]
    assert resource.getrlimit(resource.RLIMIT_FSIZE)  # (the limit was the child's alone)


def test_an_interrupted_content_leaves_the_old_file(tmp_path):
    (tmp_path / "out.txt").write_text("old")

    def chunks():
        yield b"half"
        raise Refused("a row cannot be written")

    with pytest.raises(Refused, match="a row cannot be written"):
        write_file(tmp_path / "out.txt", chunks(), Refused)
    assert (tmp_path / "out.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


@pytest.mark.timeout(60)
def test_a_stream_is_read_whole_from_a_writer_and_a_fifo_without_one_is_refused(tmp_path):
    # `score --file <(cmd)`: a pipe read as stdin is, however its writer paces its output; a
    # FIFO nothing writes to hung `score --file` (found by the flag fuzz)
    read_end, write_end = os.pipe()

    def writer():
        os.write(write_end, b'{"a": ')
        time.sleep(0.5)
        os.write(write_end, b"1}")
        os.close(write_end)

    thread = threading.Thread(target=writer)
    thread.start()
    try:
        assert read_stream(f"/dev/fd/{read_end}", Refused, max_bytes=100) == b'{"a": 1}'
    finally:
        thread.join()
        os.close(read_end)
    os.mkfifo(tmp_path / "fifo")
    with pytest.raises(Refused, match="a FIFO nothing writes to"):
        read_stream(tmp_path / "fifo", Refused, max_bytes=100)
    assert len(read_stream("/dev/zero", Refused, max_bytes=10)) == 11  # the caller refuses it
    with pytest.raises(Refused, match="is a folder"):
        read_stream(tmp_path, Refused, max_bytes=10)

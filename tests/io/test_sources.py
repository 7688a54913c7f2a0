"""Inputs as users have them: directories, globs, @LIST, compressed files, and their errors."""
import bz2
import gzip
import lzma
import os

import pytest

from laser.errors import LaserError
from laser.io.sources import (check_input, expand, file_line_blocks, located_lines,
                               read_line_blocks, zstd_module)
from laser.io.text import count_lines, read_lines

LINES = [f"line {i} ü" for i in range(3000)]
COMPRESS = {".gz": gzip.compress, ".xz": lzma.compress, ".bz2": bz2.compress,
            ".zst": zstd_module().compress}


def text(lines, final_newline=True):
    return ("\n".join(lines) + ("\n" if final_newline else "")).encode("utf-8")


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
def test_compressed_files_read_as_their_text(tmp_path, suffix):
    path = tmp_path / f"part{suffix}"
    path.write_bytes(COMPRESS[suffix](text(LINES, final_newline=False)))
    assert list(read_lines(str(path))) == LINES
    assert count_lines(str(path)) == len(LINES)


def test_compression_is_told_by_magic_bytes_not_the_name(tmp_path):
    path = tmp_path / "part.txt"
    path.write_bytes(gzip.compress(text(LINES[:5])))
    assert list(read_lines(str(path))) == LINES[:5]
    plain = tmp_path / "BZh.txt"  # text that starts like bzip2 stays text
    plain.write_text("BZh9 is not bzip2\n")
    assert list(read_lines(str(plain))) == ["BZh9 is not bzip2"]


def test_concatenated_zstd_frames_are_one_stream(tmp_path):
    path = tmp_path / "two.zst"
    compress = COMPRESS[".zst"]
    path.write_bytes(compress(text(LINES[:10])) + compress(text(LINES[10:20])))
    assert list(read_lines(str(path))) == LINES[:20]


def write_shards(tmp_path):
    """Four shards of LINES, some compressed, one empty, one without a final newline."""
    folder = tmp_path / "shards"
    (folder / "b").mkdir(parents=True)
    (folder / "a.txt.gz").write_bytes(gzip.compress(text(LINES[:1000])))
    (folder / "b" / "c.txt").write_bytes(text(LINES[1000:1500], final_newline=False))
    (folder / "b" / "d.txt").write_bytes(b"")
    (folder / "e.xz").write_bytes(lzma.compress(text(LINES[1500:])))
    (folder / ".hidden").write_text("not an input\n")
    return folder


def test_directory_glob_and_list_give_the_files_in_order(tmp_path, monkeypatch):
    folder = write_shards(tmp_path)
    order = ["a.txt.gz", "b/c.txt", "b/d.txt", "e.xz"]
    assert expand(str(folder)) == [os.path.join(folder, name) for name in order]
    assert list(read_lines(str(folder))) == LINES
    assert count_lines(str(folder)) == len(LINES)
    monkeypatch.chdir(tmp_path)
    assert expand("shards/**/*.txt*") == ["shards/a.txt.gz", "shards/b/c.txt", "shards/b/d.txt"]
    listed = tmp_path / "shards.list"
    listed.write_text("shards/e.xz\n\nshards/a.txt.gz\n")
    assert expand("@shards.list") == ["shards/e.xz", "shards/a.txt.gz"]
    assert list(read_lines("@shards.list")) == LINES[1500:] + LINES[:1000]
    located = list(located_lines("@shards.list"))
    assert located[0] == ("shards/e.xz", 1, LINES[1500])
    assert located[-1] == ("shards/a.txt.gz", 1000, LINES[999])


def test_the_paths_of_a_list_are_relative_to_the_list_file(tmp_path, monkeypatch):
    """A list beside its shards reads the same from any directory; absolute paths stay."""
    folder = write_shards(tmp_path)
    (folder / "b" / "some.list").write_text(f"c.txt\n../e.xz\n{folder / 'a.txt.gz'}\n")
    monkeypatch.chdir(folder / "b")
    assert expand("@some.list") == ["c.txt", "../e.xz", str(folder / "a.txt.gz")]
    expected = LINES[1000:1500] + LINES[1500:] + LINES[:1000]
    assert list(read_lines("@some.list")) == expected
    monkeypatch.chdir(tmp_path)
    assert expand("@shards/b/some.list") == [
        os.path.join("shards", "b", "c.txt"), os.path.join("shards", "b", "..", "e.xz"),
        str(folder / "a.txt.gz")]
    assert list(read_lines("@shards/b/some.list")) == expected


def test_an_existing_file_named_like_a_glob_or_list_is_that_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name in ("@odd", "[odd]*"):
        (tmp_path / name).write_text("itself\n")
        assert list(read_lines(name)) == ["itself"]


def truncated(data):
    return data[:len(data) // 2]


@pytest.mark.parametrize("problem, message", [
    ("missing", r"^(.*)gone\.txt: no such file$"),
    ("glob", r"^(.*)nothing\*\.txt: no file matches$"),
    ("directory", r"^(.*)empty: no files in this directory$"),
    ("list", r"^(.*)missing\.list: no such file$"),
    ("listed", r"^(.*)listed-gone\.txt: no such file$"),
    ("bad xz", r"^(.*)bad\.xz: not a valid xz stream \(corrupt, or misnamed\)$"),
])
def test_bad_inputs_are_refused_before_reading(tmp_path, problem, message):
    spec = {"missing": tmp_path / "gone.txt", "glob": tmp_path / "nothing*.txt",
            "directory": tmp_path / "empty", "list": f"@{tmp_path / 'missing.list'}",
            "listed": f"@{tmp_path / 'ok.list'}", "bad xz": tmp_path / "bad.xz"}[problem]
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".hidden").write_text("x\n")
    (tmp_path / "ok.list").write_text(f"{tmp_path / 'listed-gone.txt'}\n")
    (tmp_path / "bad.xz").write_bytes(b"this is not xz\n")
    with pytest.raises(LaserError, match=message):
        check_input(str(spec))
        list(read_lines(str(spec)))


@pytest.mark.parametrize("suffix", sorted(COMPRESS))
def test_a_truncated_stream_names_the_file_and_line(tmp_path, suffix):
    path = tmp_path / f"cut{suffix}"
    path.write_bytes(truncated(COMPRESS[suffix](text(LINES * 20))))
    read = []
    with pytest.raises(LaserError, match=rf"cut\{suffix}:(\d+): corrupt or truncated ") as error:
        read.extend(read_lines(str(path)))
    line = int(str(error.value).split(":")[1])
    assert line == len(read) + 1
    with pytest.raises(LaserError, match="corrupt or truncated"):
        count_lines(str(path))


def test_invalid_utf8_in_a_compressed_shard_names_file_and_line(tmp_path):
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(b"ok\nstill ok\n\xff\n"))
    with pytest.raises(LaserError, match=r"bad\.gz:3: invalid UTF-8 at byte 1"):
        list(read_lines(str(path)))


@pytest.mark.parametrize("content", [
    text(LINES), text(LINES, final_newline=False), b"", b"\n", b"\n\n", b"a\r\nb\n\nc",
    "é\n".encode("utf-8") * 5,
])
def test_blocks_of_lines_hold_the_lines_read_one_by_one(tmp_path, content):
    path = tmp_path / "in.txt"
    path.write_bytes(content)
    for block_bytes in (1, 5, 1 << 20):  # blocks smaller than a line, a few lines, the file
        blocks = list(file_line_blocks(str(path), block_bytes))
        assert [count for _, count in blocks] == [block.count(b"\n") + 1 for block, _ in blocks]
        assert [line for block, _ in blocks for line in block.decode("utf-8").split("\n")] == \
            list(read_lines(str(path)))


@pytest.mark.parametrize("bad, message", [(b"\xff", "invalid UTF-8 at byte 4"),
                                          (b"\x00", "contains a NUL byte")])
def test_a_bad_line_in_a_later_block_is_named_by_its_number(tmp_path, bad, message):
    path = tmp_path / "bad.gz"
    path.write_bytes(gzip.compress(text(LINES[:2000]) + b"bad" + bad + b"\n" + text(LINES[:5])))
    with pytest.raises(LaserError, match=rf"bad\.gz:2001: {message}"):
        list(read_line_blocks(str(path)))
    with pytest.raises(LaserError, match=rf"bad\.gz:2001: {message}"):
        list(file_line_blocks(str(path), 1000))

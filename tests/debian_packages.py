"""Real Debian packages built here (dpkg-deb) around gettext catalogues written here, for the
tests of the tasks that read Debian's translation catalogues."""
from __future__ import annotations

import struct
import subprocess
from pathlib import Path

HEADER = "Content-Type: text/plain; charset=UTF-8\nPlural-Forms: nplurals=2; plural=(n != 1);\n"


def mo_bytes(messages: dict[str, str]) -> bytes:
    """A GNU .mo catalogue (little-endian, no hash table) of msgid -> msgstr."""
    keys = sorted(messages)
    ids = [key.encode() for key in keys]
    strs = [messages[key].encode() for key in keys]
    start = 28 + 16 * len(keys)
    table, blob = [], b""
    for text in ids + strs:
        table.append((len(text), start + len(blob)))
        blob += text + b"\0"
    header = struct.pack("<7I", 0x950412DE, 0, len(keys), 28, 28 + 8 * len(keys), 0, start)
    return header + b"".join(struct.pack("<2I", *entry) for entry in table) + blob


def build_deb(root: Path, debs: Path, name: str, catalogues: dict[str, dict[str, str]]) -> None:
    """debs/NAME_1.0_all.deb holding a catalogue per locale."""
    tree = root / name
    for locale, messages in catalogues.items():
        folder = tree / "usr/share/locale" / locale / "LC_MESSAGES"
        folder.mkdir(parents=True)
        (folder / f"{name}.mo").write_bytes(mo_bytes(messages))
    (tree / "DEBIAN").mkdir()
    (tree / "DEBIAN/control").write_text(
        f"Package: {name}\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.org>\n"
        "Description: catalogues for a test\n")
    debs.mkdir(exist_ok=True)
    subprocess.run(["dpkg-deb", "--build", "--root-owner-group", str(tree),
                    str(debs / f"{name}_1.0_all.deb")], check=True, capture_output=True)

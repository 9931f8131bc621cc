"""docs/drive-file.md documents every field a drive file may hold.

The fields are read from the engine's config structs (serde denies unknown
fields, so these are exactly what a drive file accepts); a field added to the
engine without a line in the reference fails here.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "crates" / "ssdlab-sim" / "src" / "config"
DOC = ROOT / "docs" / "drive-file.md"

SECTIONS = {
    "DriveSection": "drive", "HostSection": "host", "ControllerSection": "controller", "NandSection": "nand",
    "FtlSection": "ftl", "DataReductionSection": "data_reduction", "PowerSection": "power",
    "SlcCacheSection": "slc_cache",
}


def _fields() -> dict:
    """{section: [field, ...]} from the `pub struct XSection { pub name: ... }` blocks."""
    out: dict = {}
    for src in sorted(CONFIG.glob("*.rs")):
        for m in re.finditer(r"pub struct (\w+Section) \{(.*?)\n\}", src.read_text(), re.S):
            out[SECTIONS[m.group(1)]] = re.findall(r"^\s*pub (\w+):", m.group(2), re.M)
    return out


def test_every_section_of_the_drive_file_is_found():
    assert set(_fields()) == set(SECTIONS.values())


def test_every_field_has_a_line_in_the_reference():
    doc = DOC.read_text()
    missing = []
    for section, fields in _fields().items():
        assert f"## [{section}]" in doc, f"docs/drive-file.md has no section [{section}]"
        missing += [f"{section}.{f}" for f in fields if f"`{f}`" not in doc]
    assert not missing, f"docs/drive-file.md does not document: {', '.join(missing)}"

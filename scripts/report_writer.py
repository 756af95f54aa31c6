"""The report writer of scripts/faults and scripts/soak (scripts/bench writes its own into the
same folder): a run's figures go to build/reports/<name>-<UTC time>.md, never into a tracked
file; with --publish they also replace the run's section of docs/reliability.md (between its
<!-- NAME:begin --> and <!-- NAME:end --> markers), the one current table per scenario."""

import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REPORTS = REPO / "build" / "reports"
DOC = REPO / "docs" / "reliability.md"


def commit():
    result = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True)
    return result.stdout.strip() or "unknown"


def write(name, sections, publish=False):
    """sections: {marker name: markdown}. Returns the report's path."""
    REPORTS.mkdir(parents=True, exist_ok=True)
    path = REPORTS / f"{name}-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}.md"
    path.write_text("".join(f"## {marker}\n\n{text}\n" for marker, text in sections.items()))
    if publish:
        for marker, text in sections.items():
            _replace_section(marker, text)
    return path


def _replace_section(name, text):
    doc = DOC.read_text()
    begin, end = f"<!-- {name}:begin -->\n", f"<!-- {name}:end -->"
    if begin not in doc or end not in doc:
        sys.exit(f"{DOC}: the markers {begin.strip()} and {end} are missing")
    head, rest = doc.split(begin, 1)
    DOC.write_text(head + begin + text + rest[rest.index(end):])

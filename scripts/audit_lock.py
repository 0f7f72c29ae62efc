"""Audit the lock files with pip-audit: a known vulnerability fails the run, missing advisories skip it.

    python scripts/audit_lock.py [LOCK ...]      # default: requirements.lock requirements-dev.lock

pip-audit asks PyPI for the advisories of every pinned release. Exit status 1 when a locked release
has a known vulnerability (each one is listed with the releases that fix it) or pip-audit fails for
another reason; 0 when none is known, or when no advisory could be fetched (offline, PyPI down),
which is printed as "pip-audit SKIPPED: <reason>" so that a run without the audit is visible.
scripts/test.sh runs it, and so .ci/run does.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LOCKS = ("requirements.lock", "requirements-dev.lock")
AUDIT_TIMEOUT_S = 300
# What pip-audit's traceback says when the advisory service cannot be reached or answers an error.
UNREACHABLE_MARKS = ("requests.exceptions.", "ServiceError", "Max retries exceeded", "NameResolutionError")


@dataclass(frozen=True)
class Verdict:
    passed: bool
    message: str


def judge(report: dict[str, Any] | None, stderr: str, returncode: int) -> Verdict:
    """The outcome of one pip-audit run: its JSON report (None when it wrote none), stderr, exit status."""
    if report is None:
        if any(mark in stderr for mark in UNREACHABLE_MARKS):
            return Verdict(True, f"pip-audit SKIPPED: advisories could not be fetched ({_last_line(stderr)})")
        return Verdict(False, f"pip-audit failed (exit status {returncode}):\n{stderr}")
    dependencies = report.get("dependencies", [])
    if not dependencies:
        return Verdict(False, "pip-audit found no locked package to audit")
    vulnerable = [dep for dep in dependencies if dep.get("vulns")]
    if vulnerable:
        lines = [
            f"  {dep['name']} {dep['version']}: {vuln['id']} (fixed in {', '.join(vuln.get('fix_versions') or ['-'])})"
            for dep in vulnerable
            for vuln in dep["vulns"]
        ]
        return Verdict(False, "pip-audit: known vulnerabilities in the locked releases:\n" + "\n".join(lines))
    if returncode != 0:
        return Verdict(False, f"pip-audit failed (exit status {returncode}):\n{stderr}")
    skipped = [dep for dep in dependencies if "skip_reason" in dep]
    if len(skipped) == len(dependencies):
        return Verdict(
            True,
            f"pip-audit SKIPPED: no advisory could be fetched for any of the {len(dependencies)} locked packages "
            f"(first: {skipped[0]['skip_reason']})",
        )
    message = f"pip-audit: {len(dependencies) - len(skipped)} locked packages audited, no known vulnerabilities"
    if skipped:
        message += "; not audited: " + "; ".join(dep["skip_reason"] for dep in skipped)
    return Verdict(True, message)


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def audit(locks: list[str]) -> Verdict:
    with tempfile.TemporaryDirectory() as scratch:
        report_path = Path(scratch) / "audit.json"
        command = [sys.executable, "-m", "pip_audit", "--disable-pip", "--require-hashes"]
        command += ["--progress-spinner", "off", "--format", "json", "--output", str(report_path)]
        for lock in locks:
            command += ["--requirement", lock]
        try:
            done = subprocess.run(command, capture_output=True, text=True, timeout=AUDIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return Verdict(True, f"pip-audit SKIPPED: no answer from the advisory service in {AUDIT_TIMEOUT_S} s")
        report = json.loads(report_path.read_text()) if report_path.exists() else None
        return judge(report, done.stderr, done.returncode)


def main(argv: list[str]) -> int:
    verdict = audit(argv or list(LOCKS))
    print(verdict.message, file=sys.stdout if verdict.passed else sys.stderr)
    return 0 if verdict.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""The views benchmark runs and ends with its headline (a smoke test; the figure is not checked)."""

from __future__ import annotations

import re

import pytest

from bench import views as bench


def test_views_benchmark_smoke(capsys: pytest.CaptureFixture[str]) -> None:
    bench.main(["--seconds", "0"])  # the minimum: 5 matches per configuration
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == len(bench.CONFIGS) + 1
    assert all("pushes/s" in line for line in lines[:-1])
    assert re.fullmatch(r"views: \d+ pushes/s \(4p/36 random\)", lines[-1])

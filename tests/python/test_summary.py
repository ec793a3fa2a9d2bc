"""``Result.summary`` is the report's scalar entries as one row, typed as pyarrow infers them
(built without ``from_pylist``, which imports pandas: this checks they agree)."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa

import schedlab

from conftest import WORKLOADS
from easy import EASY


def test_the_summary_is_the_reports_scalars_as_from_pylist_types_them(write_trace):
    runs = [
        schedlab.simulate(WORKLOADS / "KTH-SP2-1996-2.1-cln.swf.gz", scheduler="easy"),
        schedlab.simulate(write_trace([(0, 100, 3, 100)]), policy=EASY(), interval=60),
    ]
    for result in runs:
        flat = {k: v for k, v in result.report.items() if not isinstance(v, (dict, list))}
        for key in ("warmup", "skipped_by_reason"):
            flat[key] = json.dumps(result.report.get(key), sort_keys=True)
        expected = pa.Table.from_pylist([flat])
        assert result.summary.schema.equals(expected.schema)
        assert result.summary.equals(expected)
    assert runs[1].summary.column("interval").type == pa.int64()
    assert runs[0].summary.column("interval").type == pa.null()


def test_a_simulation_does_not_import_pandas():
    code = (
        "import sys, schedlab; "
        f"schedlab.simulate({str(WORKLOADS / 'SDSC-SP2-1998-4.2-cln.swf.gz')!r}).summary; "
        "print('pandas' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"

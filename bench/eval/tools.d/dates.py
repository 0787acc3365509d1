"""Days between two calendar dates: pure date arithmetic, no clock."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from toolcall_cli import tool


def _date(text: str) -> date:
    # "2024-03-01", "2024/3/1", "2024年3月1日"
    parts = re.findall(r"\d+", text)
    if len(parts) != 3 or len(parts[0]) != 4:
        raise ValueError(f"cannot read {text!r} as a date; use YYYY-MM-DD, e.g. 2024-03-01")
    return date(int(parts[0]), int(parts[1]), int(parts[2]))


@tool(cacheable=True)
def days_between(start_date: str, end_date: str) -> dict[str, Any]:
    """Count the days from one date to another (日期间隔天数).

    Args:
        start_date: The first date, YYYY-MM-DD, e.g. "2024-03-01".
        end_date: The second date, YYYY-MM-DD, e.g. "2024-12-25".
    """
    start, end = _date(start_date), _date(end_date)
    days = (end - start).days
    return {"start_date": start.isoformat(), "end_date": end.isoformat(), "days": days}

"""HR and payroll: Chinese individual income tax and social insurance, US federal tax, overtime,
salary conversions, timesheets, severance, leave and turnover."""

from __future__ import annotations

import re
from typing import Any, Literal

from toolcall_cli import tool

# The comprehensive-income table (综合所得税率表), yearly: (upper limit, rate, quick deduction).
_CN_ANNUAL_BRACKETS = (
    (36_000, 0.03, 0), (144_000, 0.10, 2_520), (300_000, 0.20, 16_920), (420_000, 0.25, 31_920),
    (660_000, 0.30, 52_920), (960_000, 0.35, 85_920), (float("inf"), 0.45, 181_920),
)  # fmt: skip
# The monthly table used for a one-off annual bonus taxed on its own (bonus / 12 picks the rate).
_CN_MONTHLY_BRACKETS = (
    (3_000, 0.03, 0), (12_000, 0.10, 210), (25_000, 0.20, 1_410), (35_000, 0.25, 2_660),
    (55_000, 0.30, 4_410), (80_000, 0.35, 7_160), (float("inf"), 0.45, 15_160),
)  # fmt: skip
_CN_THRESHOLD_MONTHLY = 5_000

# 2024 US federal brackets: (upper limit, rate) and the standard deduction per filing status.
_US_2024 = {
    "single": ((11_600, 0.10), (47_150, 0.12), (100_525, 0.22), (191_950, 0.24),
               (243_725, 0.32), (609_350, 0.35), (float("inf"), 0.37)),
    "married_joint": ((23_200, 0.10), (94_300, 0.12), (201_050, 0.22), (383_900, 0.24),
                      (487_450, 0.32), (731_200, 0.35), (float("inf"), 0.37)),
}  # fmt: skip
_US_STANDARD_DEDUCTION_2024 = {"single": 14_600, "married_joint": 29_200}

_PERIODS_PER_YEAR = {"year": 1, "month": 12, "week": 52, "day": 260, "hour": 2080}


def _cn_tax(taxable: float, brackets: tuple[tuple[float, float, int], ...]) -> float:
    if taxable <= 0:
        return 0.0
    for limit, rate, quick in brackets:
        if taxable <= limit:
            return taxable * rate - quick
    raise AssertionError("the last bracket has no upper limit")


@tool(permission="read")
def china_income_tax_withholding(
    monthly_salary: float,
    month: int = 1,
    social_insurance: float = 0.0,
    special_deductions: float = 0.0,
) -> dict[str, Any]:
    """China individual income tax withheld from a salary in a given month by the cumulative
    withholding method, with the take-home pay that month and the tax for the whole year. Use it
    for 'how much tax on a 20,000 yuan salary'. For the year-end bonus use
    china_annual_bonus_tax; for US tax use us_federal_income_tax.
    中文：个人所得税、个税、工资扣税、税后工资、到手工资。

    Args:
        monthly_salary: Gross monthly pay in yuan.
        month: Which month of the tax year, 1-12 (tax rises as the running total crosses brackets).
        social_insurance: The employee's monthly social insurance and housing fund (五险一金).
        special_deductions: Monthly special additional deductions (专项附加扣除: children, rent...).
    """
    if not 1 <= month <= 12:
        raise ValueError("month must be 1-12")
    taxable = monthly_salary - social_insurance - special_deductions - _CN_THRESHOLD_MONTHLY
    this_month = _cn_tax(taxable * month, _CN_ANNUAL_BRACKETS) - _cn_tax(
        taxable * (month - 1), _CN_ANNUAL_BRACKETS
    )
    annual = _cn_tax(taxable * 12, _CN_ANNUAL_BRACKETS)
    return {
        "tax_this_month": round(this_month, 2),
        "take_home_this_month": round(monthly_salary - social_insurance - this_month, 2),
        "annual_tax": round(annual, 2),
    }


@tool(permission="read")
def china_annual_bonus_tax(bonus: float) -> dict[str, Any]:
    """Tax on a one-off annual bonus taxed separately from salary in China, using the monthly
    rate table, with the bonus after tax. Use it for year-end bonus questions. For monthly
    salary tax use china_income_tax_withholding.
    中文：年终奖个税、年终奖扣税、奖金税后。

    Args:
        bonus: The bonus in yuan.
    """
    for limit, rate, quick in _CN_MONTHLY_BRACKETS:
        if bonus / 12 <= limit:
            tax = max(bonus * rate - quick, 0.0)
            return {
                "tax": round(tax, 2),
                "after_tax": round(bonus - tax, 2),
                "rate_percent": rate * 100,
            }
    raise AssertionError("the last bracket has no upper limit")


@tool(permission="read")
def china_social_insurance(
    monthly_salary: float,
    base_floor: float = 0.0,
    base_ceiling: float = 0.0,
    housing_fund_percent: float = 12.0,
) -> dict[str, Any]:
    """Employee and employer monthly contributions to China's social insurance and housing
    provident fund (pension, medical, unemployment, injury, housing fund) from a salary. Rates
    are the common ones (employee 8% / 2% / 0.5%; employer 16% / 9% / 0.5% / 0.2% injury);
    cities differ, so give the local contribution base limits. For income tax use
    china_income_tax_withholding.
    中文：五险一金、社保、公积金、社保缴费。

    Args:
        monthly_salary: Gross monthly pay in yuan.
        base_floor: The city's minimum contribution base (0 for none).
        base_ceiling: The city's maximum contribution base (0 for none).
        housing_fund_percent: The housing fund rate, 5-12, paid by both sides.
    """
    base = max(monthly_salary, base_floor)
    if base_ceiling:
        base = min(base, base_ceiling)
    fund = housing_fund_percent / 100
    employee = {"pension": 0.08, "medical": 0.02, "unemployment": 0.005, "housing_fund": fund}
    employer = {
        "pension": 0.16,
        "medical": 0.09,
        "unemployment": 0.005,
        "work_injury": 0.002,
        "housing_fund": fund,
    }
    mine = {k: round(base * r, 2) for k, r in employee.items()}
    theirs = {k: round(base * r, 2) for k, r in employer.items()}
    return {
        "base": base,
        "employee": mine,
        "employee_total": round(sum(mine.values()), 2),
        "employer": theirs,
        "employer_total": round(sum(theirs.values()), 2),
    }


@tool(permission="read")
def us_federal_income_tax(
    income: float,
    filing_status: Literal["single", "married_joint"] = "single",
    itemized_deductions: float = 0.0,
) -> dict[str, Any]:
    """US federal income tax for tax year 2024 from gross income and filing status, with the
    standard or itemised deduction, marginal and effective rates. Use it for American income tax
    estimates. It does not include state tax or FICA.
    中文：美国联邦所得税、美国个税、报税。

    Args:
        income: Gross income in dollars.
        filing_status: single or married_joint.
        itemized_deductions: Itemised deductions; the standard deduction is used when larger.
    """
    deduction = max(_US_STANDARD_DEDUCTION_2024[filing_status], itemized_deductions)
    taxable = max(income - deduction, 0.0)
    tax, lower, marginal = 0.0, 0.0, 0.10
    for limit, rate in _US_2024[filing_status]:
        if taxable > lower:
            tax += (min(taxable, limit) - lower) * rate
            marginal = rate
        lower = limit
    return {
        "taxable_income": round(taxable, 2),
        "tax": round(tax, 2),
        "marginal_rate_percent": marginal * 100,
        "effective_rate_percent": round(tax / income * 100, 2) if income else 0.0,
    }


@tool(permission="read")
def overtime_pay(
    hourly_rate: float,
    weekday_hours: float = 0,
    rest_day_hours: float = 0,
    holiday_hours: float = 0,
) -> dict[str, Any]:
    """Overtime pay under Chinese rules: 150% on workdays, 200% on rest days and 300% on public
    holidays, from an hourly rate and the hours. Use it for 'how much overtime pay for working a
    weekend'.
    中文：加班费、加班工资、节假日三倍工资、周末加班。

    Args:
        hourly_rate: The normal hourly wage.
        weekday_hours: Overtime hours after a normal working day.
        rest_day_hours: Hours worked on a weekly rest day.
        holiday_hours: Hours worked on a statutory public holiday.
    """
    parts = {
        "weekday": weekday_hours * hourly_rate * 1.5,
        "rest_day": rest_day_hours * hourly_rate * 2,
        "holiday": holiday_hours * hourly_rate * 3,
    }
    return {
        "parts": {k: round(v, 2) for k, v in parts.items()},
        "total": round(sum(parts.values()), 2),
    }


@tool(permission="read")
def salary_period_convert(
    amount: float, period: Literal["year", "month", "week", "day", "hour"]
) -> dict[str, Any]:
    """Express pay in every period: yearly, monthly, weekly, daily and hourly, assuming 40-hour
    weeks. Use it for 'what is 60k a year per hour' or comparing job offers. For partial months
    use prorated_salary.
    中文：时薪月薪年薪换算、日薪、工资换算。

    Args:
        amount: The pay.
        period: What period the amount is for.
    """
    yearly = amount * _PERIODS_PER_YEAR[period]
    return {name: round(yearly / count, 2) for name, count in _PERIODS_PER_YEAR.items()}


@tool(permission="read")
def prorated_salary(
    monthly_salary: float, days_worked: float, working_days_in_month: float = 21.75
) -> dict[str, Any]:
    """Pay for a partial month, e.g. a new joiner or a leaver, from the days actually worked out
    of the working days. Use it for the first or last month's salary. For full-period conversion
    use salary_period_convert.
    中文：按出勤天数折算工资、入职当月工资、离职工资。

    Args:
        monthly_salary: The full monthly salary.
        days_worked: Working days worked in the month.
        working_days_in_month: The month's working days (21.75 is China's statutory average).
    """
    daily = monthly_salary / working_days_in_month
    return {"daily_rate": round(daily, 2), "pay": round(daily * days_worked, 2)}


@tool(permission="read")
def timesheet_hours(entries: list[str], break_minutes_per_day: int = 0) -> dict[str, Any]:
    """Total the hours on a timesheet of start-end entries like 09:00-17:30, overnight shifts
    allowed, minus breaks. Use it for weekly hours worked and billing time. For overtime money
    use overtime_pay.
    中文：工时统计、考勤、上班时长、工作小时数。

    Args:
        entries: One "HH:MM-HH:MM" per day or shift.
        break_minutes_per_day: Unpaid break to subtract from each entry.
    """
    total = 0
    for entry in entries:
        match = re.fullmatch(r"\s*(\d{1,2}):(\d{2})\s*-\s*(\d{1,2}):(\d{2})\s*", entry)
        if match is None:
            raise ValueError(f"{entry!r} is not HH:MM-HH:MM")
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        minutes = (h2 * 60 + m2 - h1 * 60 - m1) % (24 * 60)
        total += max(minutes - break_minutes_per_day, 0)
    return {"hours": round(total / 60, 2), "minutes": total, "shifts": len(entries)}


@tool(permission="read")
def china_severance_pay(
    monthly_wage: float, years: int, extra_months: int = 0, local_average_wage: float = 0.0
) -> dict[str, Any]:
    """Statutory severance (economic compensation, 'N') under China's Labour Contract Law article
    47, from monthly wage and years of service, with any extra months (N+1) and the local
    average wage cap. Use it for layoff and termination compensation.
    中文：经济补偿金、离职补偿、N+1、裁员赔偿。

    Args:
        monthly_wage: The average monthly wage of the last 12 months.
        years: Full years of service.
        extra_months: Months of service beyond the full years (6+ count as a year, fewer as half).
        local_average_wage: The city's average monthly wage, for the 3x cap (0 for no cap).
    """
    n = years + (1.0 if extra_months >= 6 else 0.5 if extra_months > 0 else 0.0)
    wage = monthly_wage
    if local_average_wage and monthly_wage > 3 * local_average_wage:
        wage, n = 3 * local_average_wage, min(n, 12.0)
    return {"months_of_pay": n, "monthly_base": round(wage, 2), "severance": round(n * wage, 2)}


@tool(permission="read")
def china_annual_leave_days(total_work_years: float) -> dict[str, Any]:
    """Statutory paid annual leave days in China from cumulative years of work (0, 5, 10 or 15
    days). Use it for 'how many days of annual leave am I entitled to'.
    中文：年假天数、带薪年假、休假、年休假。

    Args:
        total_work_years: Years worked in total, with any employers.
    """
    days = (
        0
        if total_work_years < 1
        else 5
        if total_work_years < 10
        else 10
        if total_work_years < 20
        else 15
    )
    return {"days": days}


@tool(permission="read")
def employee_turnover_rate(
    leavers: int, headcount_start: int, headcount_end: int
) -> dict[str, Any]:
    """Staff turnover rate for a period: leavers divided by the average headcount. Use it for HR
    attrition and retention reporting.
    中文：离职率、员工流失率、人员流动率。

    Args:
        leavers: How many employees left during the period.
        headcount_start: Headcount at the start.
        headcount_end: Headcount at the end.
    """
    average = (headcount_start + headcount_end) / 2
    if average <= 0:
        raise ValueError("the headcount must be positive")
    return {"turnover_percent": round(leavers / average * 100, 2), "average_headcount": average}

"""Personal and business finance: loans, interest, savings, investment returns."""

from __future__ import annotations

import math
from typing import Any, Literal

from toolcall_cli import tool


def _cents(value: float) -> float:
    return round(value + 0.0, 2)


def _payment(principal: float, annual_rate_percent: float, months: int) -> float:
    if months <= 0:
        raise ValueError("the term must be at least one month")
    rate = annual_rate_percent / 100 / 12
    if rate == 0:
        return principal / months
    return principal * rate / (1 - (1 + rate) ** -months)


@tool(permission="read")
def loan_monthly_payment(
    principal: float, annual_rate_percent: float, years: float
) -> dict[str, Any]:
    """Monthly repayment of a fixed-rate amortising loan or mortgage (等额本息月供).
    中文：房贷车贷月供、等额本息。

    Args:
        principal: The amount borrowed, e.g. 300000.
        annual_rate_percent: The nominal yearly interest rate in percent, e.g. 4.5.
        years: The loan term in years, e.g. 30.
    """
    months = round(years * 12)
    payment = _payment(principal, annual_rate_percent, months)
    return {
        "monthly_payment": _cents(payment),
        "months": months,
        "total_paid": _cents(payment * months),
        "total_interest": _cents(payment * months - principal),
    }


@tool(permission="read")
def loan_amortization_schedule(
    principal: float, annual_rate_percent: float, years: float, show_months: int = 12
) -> dict[str, Any]:
    """Month-by-month split of each loan payment into interest and principal, with the balance left.
    中文：贷款还款计划表、每期本金利息。

    Args:
        principal: The amount borrowed.
        annual_rate_percent: The nominal yearly interest rate in percent.
        years: The loan term in years.
        show_months: How many of the first months to list (at most 600).
    """
    months = round(years * 12)
    payment = _payment(principal, annual_rate_percent, months)
    rate = annual_rate_percent / 100 / 12
    balance = principal
    rows = []
    for month in range(1, min(show_months, months, 600) + 1):
        interest = balance * rate
        balance -= payment - interest
        rows.append(
            {
                "month": month,
                "interest": _cents(interest),
                "principal": _cents(payment - interest),
                "balance": _cents(max(balance, 0.0)),
            }
        )
    return {"monthly_payment": _cents(payment), "schedule": rows}


@tool(permission="read")
def equal_principal_repayment(
    principal: float, annual_rate_percent: float, years: float
) -> dict[str, Any]:
    """Repayments when the same principal is repaid each month (等额本金): first and last payment.
    中文：等额本金还款、首月末月还款额。

    Args:
        principal: The amount borrowed.
        annual_rate_percent: The nominal yearly interest rate in percent.
        years: The loan term in years.
    """
    months = round(years * 12)
    if months <= 0:
        raise ValueError("the term must be at least one month")
    rate = annual_rate_percent / 100 / 12
    share = principal / months
    first = share + principal * rate
    last = share + share * rate
    total_interest = rate * share * months * (months + 1) / 2
    return {
        "first_payment": _cents(first),
        "last_payment": _cents(last),
        "monthly_decrease": _cents(share * rate),
        "total_interest": _cents(total_interest),
    }


@tool(permission="read")
def compound_interest(
    principal: float,
    annual_rate_percent: float,
    years: float,
    compounds_per_year: int = 12,
    monthly_contribution: float = 0.0,
) -> dict[str, Any]:
    """Future value of savings that earn compound interest, with optional monthly contributions.
    中文：复利计算、存款定投到期本息。

    Args:
        principal: The starting balance.
        annual_rate_percent: The yearly interest rate in percent.
        years: How many years the money grows.
        compounds_per_year: Compounding periods per year (1 yearly, 12 monthly, 365 daily).
        monthly_contribution: An amount added at the end of every month.
    """
    if compounds_per_year <= 0:
        raise ValueError("compounds_per_year must be positive")
    rate = annual_rate_percent / 100
    growth = (1 + rate / compounds_per_year) ** (compounds_per_year * years)
    monthly_rate = (1 + rate / compounds_per_year) ** (compounds_per_year / 12) - 1
    months = round(years * 12)
    if monthly_rate == 0:
        added = monthly_contribution * months
    else:
        added = monthly_contribution * (((1 + monthly_rate) ** months - 1) / monthly_rate)
    future = principal * growth + added
    contributed = principal + monthly_contribution * months
    return {
        "future_value": _cents(future),
        "contributed": _cents(contributed),
        "interest_earned": _cents(future - contributed),
    }


@tool(permission="read")
def simple_interest(principal: float, annual_rate_percent: float, days: int) -> dict[str, Any]:
    """Interest that does not compound, over a number of days (actual/365), e.g. a term deposit.
    中文：单利、定期存款利息。

    Args:
        principal: The amount deposited or lent.
        annual_rate_percent: The yearly rate in percent.
        days: The number of days the money is held.
    """
    interest = principal * annual_rate_percent / 100 * days / 365
    return {"interest": _cents(interest), "total": _cents(principal + interest)}


@tool(permission="read")
def present_value(future_amount: float, annual_rate_percent: float, years: float) -> dict[str, Any]:
    """What a sum received in the future is worth today, discounted at a yearly rate.
    中文：现值、未来的钱折现到今天。

    Args:
        future_amount: The amount received later.
        annual_rate_percent: The yearly discount rate in percent.
        years: How many years until it is received.
    """
    value = future_amount / (1 + annual_rate_percent / 100) ** years
    return {"present_value": _cents(value), "discount": _cents(future_amount - value)}


@tool(permission="read")
def net_present_value(rate_percent: float, cash_flows: list[float]) -> dict[str, Any]:
    """NPV of a project's cash flows; the first flow is now (usually the negative investment).
    中文：净现值NPV、投资项目值不值得做。

    Args:
        rate_percent: The discount rate per period in percent.
        cash_flows: One amount per period, starting with period 0, e.g. [-1000, 300, 400, 500].
    """
    rate = rate_percent / 100
    npv = sum(flow / (1 + rate) ** period for period, flow in enumerate(cash_flows))
    return {"npv": _cents(npv), "worth_doing": npv > 0}


@tool(permission="read")
def internal_rate_of_return(cash_flows: list[float]) -> dict[str, Any]:
    """IRR: the discount rate at which a series of cash flows has a net present value of zero.
    中文：内部收益率IRR。

    Args:
        cash_flows: One amount per period starting now, with at least one sign change.
    """
    if not (any(f < 0 for f in cash_flows) and any(f > 0 for f in cash_flows)):
        raise ValueError("cash flows need at least one negative and one positive amount")

    def npv(rate: float) -> float:
        return sum(f / (1 + rate) ** i for i, f in enumerate(cash_flows))

    low, high = -0.9999, 10.0
    if npv(low) * npv(high) > 0:
        raise ValueError("no IRR between -99.99% and 1000%")
    for _ in range(200):  # bisection: slow but never diverges, unlike Newton's method
        middle = (low + high) / 2
        if npv(low) * npv(middle) <= 0:
            high = middle
        else:
            low = middle
    return {"irr_percent": round((low + high) / 2 * 100, 4)}


@tool(permission="read")
def savings_goal_monthly_deposit(
    goal: float, years: float, annual_rate_percent: float = 0.0, already_saved: float = 0.0
) -> dict[str, Any]:
    """How much to put aside each month to reach a savings target by a deadline.
    中文：储蓄目标、每月存款额。

    Args:
        goal: The amount wanted at the end.
        years: The time available in years.
        annual_rate_percent: The yearly return on the savings in percent (compounded monthly).
        already_saved: What is saved today.
    """
    months = round(years * 12)
    if months <= 0:
        raise ValueError("years must give at least one month")
    rate = annual_rate_percent / 100 / 12
    grown = already_saved * (1 + rate) ** months
    remaining = max(goal - grown, 0.0)
    factor = months if rate == 0 else ((1 + rate) ** months - 1) / rate
    return {"monthly_deposit": _cents(remaining / factor), "months": months}


@tool(permission="read")
def doubling_time(annual_rate_percent: float) -> dict[str, Any]:
    """How many years money takes to double at a yearly return: exact and the rule of 72.
    中文：翻倍时间、72法则。

    Args:
        annual_rate_percent: The yearly growth rate in percent, e.g. 7.
    """
    if annual_rate_percent <= 0:
        raise ValueError("the rate must be positive for money to double")
    exact = math.log(2) / math.log(1 + annual_rate_percent / 100)
    return {"years_exact": round(exact, 2), "rule_of_72": round(72 / annual_rate_percent, 2)}


@tool(permission="read")
def credit_card_payoff_time(
    balance: float, annual_rate_percent: float, monthly_payment: float
) -> dict[str, Any]:
    """How many months a card balance takes to clear at a fixed monthly payment, and the interest.
    中文：信用卡还款期数与利息。

    Args:
        balance: The amount owed on the card.
        annual_rate_percent: The card's APR in percent.
        monthly_payment: What is paid every month.
    """
    rate = annual_rate_percent / 100 / 12
    if monthly_payment <= balance * rate:
        raise ValueError("the payment does not cover the monthly interest; the debt never clears")
    months = 0
    interest = 0.0
    while balance > 0.005 and months < 1200:
        charge = balance * rate
        interest += charge
        balance = balance + charge - monthly_payment
        months += 1
    return {"months": months, "years": round(months / 12, 1), "total_interest": _cents(interest)}


@tool(permission="read")
def inflation_adjusted_value(
    amount: float, inflation_percent: float, years: float
) -> dict[str, Any]:
    """Purchasing power of money after inflation, and the price a thing costing `amount` will have.
    中文：通货膨胀、购买力变化。

    Args:
        amount: A sum of money today.
        inflation_percent: The average yearly inflation in percent.
        years: How many years ahead.
    """
    factor = (1 + inflation_percent / 100) ** years
    return {"future_price": _cents(amount * factor), "real_value_today": _cents(amount / factor)}


@tool(permission="read")
def annualized_return(start_value: float, end_value: float, years: float) -> dict[str, Any]:
    """CAGR: the compound yearly growth rate between a start and an end value (年化收益率).
    中文：年化收益率、复合增长率。

    Args:
        start_value: The value at the start, e.g. an investment's cost.
        end_value: The value at the end.
        years: The time between them in years.
    """
    if start_value <= 0 or years <= 0:
        raise ValueError("start_value and years must be positive")
    cagr = (end_value / start_value) ** (1 / years) - 1
    total = end_value / start_value - 1
    return {"cagr_percent": round(cagr * 100, 4), "total_return_percent": round(total * 100, 4)}


@tool(permission="read")
def break_even_point(
    fixed_costs: float, price_per_unit: float, variable_cost_per_unit: float
) -> dict[str, Any]:
    """Units to sell before a product covers its fixed costs, and the revenue at that point.
    中文：盈亏平衡点、保本销量。

    Args:
        fixed_costs: Costs that do not change with volume (rent, salaries).
        price_per_unit: The selling price of one unit.
        variable_cost_per_unit: What each extra unit costs to make.
    """
    margin = price_per_unit - variable_cost_per_unit
    if margin <= 0:
        raise ValueError("the price must be above the variable cost per unit")
    units = math.ceil(fixed_costs / margin)
    return {
        "units": units,
        "revenue": _cents(units * price_per_unit),
        "unit_margin": _cents(margin),
    }


@tool(permission="read")
def depreciation_schedule(
    cost: float,
    salvage_value: float,
    life_years: int,
    method: Literal["straight_line", "declining_balance"] = "straight_line",
) -> dict[str, Any]:
    """Yearly depreciation of an asset, straight-line or double-declining balance.
    中文：固定资产折旧、直线法和双倍余额递减法。

    Args:
        cost: What the asset cost.
        salvage_value: What it is worth at the end of its life.
        life_years: Its useful life in years (1 to 100).
        method: straight_line or declining_balance (double-declining).
    """
    if not 1 <= life_years <= 100:
        raise ValueError("life_years must be between 1 and 100")
    book = cost
    rows = []
    for year in range(1, life_years + 1):
        if method == "straight_line":
            charge = (cost - salvage_value) / life_years
        else:
            charge = min(book * 2 / life_years, max(book - salvage_value, 0.0))
        book -= charge
        rows.append({"year": year, "depreciation": _cents(charge), "book_value": _cents(book)})
    return {"method": method, "schedule": rows}

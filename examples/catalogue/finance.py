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
    """Monthly payment of a fixed-rate loan repaid in equal instalments (annuity, 等额本息), with
    the total paid and total interest. Use it for 'how much is my mortgage / car loan / personal
    loan each month' when you borrow a sum at a yearly rate for some years. For equal-principal
    repayment use equal_principal_repayment; for the month-by-month interest/principal split use
    loan_amortization_schedule.
    中文：房贷月供、车贷月供、贷款每月还多少、等额本息、总利息。

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
    """Amortisation table of a fixed-rate loan: for each month, how much of the payment is
    interest, how much repays principal, and the balance still owed. Use it when someone asks
    how a mortgage or loan is paid down over time, or how much interest the first year costs.
    For just the monthly payment use loan_monthly_payment.
    中文：还款计划表、每月本金利息、剩余本金、贷款明细。

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
    """Repayments of a loan paid back with the same principal every month (equal-principal,
    等额本金): the first and last payment, how much each month drops and the total interest. Use
    it when the borrower chose decreasing payments. For equal monthly payments (等额本息) use
    loan_monthly_payment.
    中文：等额本金、房贷首月还款、每月递减、贷款利息。

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
    """Future value of savings or an investment growing at compound interest, optionally with a
    fixed amount added every month. Use it for 'how much will my savings / deposit / monthly
    investment plan be worth in N years'. For interest that does not compound use
    simple_interest; for the monthly deposit needed to hit a goal use
    savings_goal_monthly_deposit.
    中文：复利计算、利滚利、存款定投收益、到期本息。

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
    """Interest that does not compound, counted over a number of days (actual/365), and the total
    with principal. Use it for a fixed or term deposit, a short loan between friends, or any
    'interest for N days at X% a year'. For interest-on-interest growth use compound_interest.
    中文：单利、定期存款利息、存款利息多少、借款利息。

    Args:
        principal: The amount deposited or lent.
        annual_rate_percent: The yearly rate in percent.
        days: The number of days the money is held.
    """
    interest = principal * annual_rate_percent / 100 * days / 365
    return {"interest": _cents(interest), "total": _cents(principal + interest)}


@tool(permission="read")
def present_value(future_amount: float, annual_rate_percent: float, years: float) -> dict[str, Any]:
    """Present value: what a single sum received in the future is worth today, discounted at a
    yearly rate. Use it to compare money now with money later or to discount a future payment.
    For a series of cash flows use net_present_value.
    中文：现值、折现、未来的钱现在值多少、贴现。

    Args:
        future_amount: The amount received later.
        annual_rate_percent: The yearly discount rate in percent.
        years: How many years until it is received.
    """
    value = future_amount / (1 + annual_rate_percent / 100) ** years
    return {"present_value": _cents(value), "discount": _cents(future_amount - value)}


@tool(permission="read")
def net_present_value(rate_percent: float, cash_flows: list[float]) -> dict[str, Any]:
    """Net present value (NPV) of a project's or investment's cash flows at a discount rate, with
    the first flow now (usually the negative outlay), and whether it is worth doing. Use it for
    capital budgeting and 'is this investment worth it'. For the break-even rate use
    internal_rate_of_return.
    中文：净现值NPV、投资决策、项目是否可行、现金流折现。

    Args:
        rate_percent: The discount rate per period in percent.
        cash_flows: One amount per period, starting with period 0, e.g. [-1000, 300, 400, 500].
    """
    rate = rate_percent / 100
    npv = sum(flow / (1 + rate) ** period for period, flow in enumerate(cash_flows))
    return {"npv": _cents(npv), "worth_doing": npv > 0}


@tool(permission="read")
def internal_rate_of_return(cash_flows: list[float]) -> dict[str, Any]:
    """Internal rate of return (IRR) of a series of periodic cash flows: the rate at which their
    net present value is zero. Use it for the yield of an investment, project or rental property
    with an upfront cost and later returns. For a start and end value only, use
    annualized_return.
    中文：内部收益率IRR、投资回报率、项目收益率。

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
    """How much to save each month to reach a target amount by a deadline, counting what is
    already saved and an optional yearly return. Use it for saving for a house deposit, a car,
    education or retirement. For what regular savings will grow to use compound_interest.
    中文：存钱目标、每月存多少、储蓄计划、攒钱。

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
    """How many years money takes to double at a yearly growth or return rate, exactly and by the
    rule of 72. Use it for 'how long until my investment doubles'. It does not compute a future
    value; use compound_interest for that.
    中文：翻倍时间、72法则、多久翻一番、资产翻倍。

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
    """How many months it takes to pay off a credit card balance or other revolving debt with a
    fixed monthly payment at an APR, and the interest paid. Use it for 'how long to clear my
    card debt'. For a fixed-term loan payment use loan_monthly_payment.
    中文：信用卡还款、还清欠款要多久、信用卡利息、债务。

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
    """Effect of inflation over years: what something costing an amount today will cost later,
    and what that amount will be worth in today's money (purchasing power). Use it for
    cost-of-living, real value and 'what is 100 yuan worth in 10 years'. It does not compute
    investment growth; use compound_interest.
    中文：通货膨胀、购买力、钱贬值、物价上涨。

    Args:
        amount: A sum of money today.
        inflation_percent: The average yearly inflation in percent.
        years: How many years ahead.
    """
    factor = (1 + inflation_percent / 100) ** years
    return {"future_price": _cents(amount * factor), "real_value_today": _cents(amount / factor)}


@tool(permission="read")
def annualized_return(start_value: float, end_value: float, years: float) -> dict[str, Any]:
    """Annualised return (CAGR, compound annual growth rate) between a start value and an end
    value over a number of years, with the total return. Use it for 'what yearly return did my
    investment, fund or house price give'. For uneven cash flows use internal_rate_of_return.
    中文：年化收益率、复合年增长率、投资回报、收益率。

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
    """Break-even point: units to sell to cover fixed costs at a price and variable cost per
    unit, with the revenue at that point and the unit contribution margin. Use it for business
    planning and 'how many do I need to sell to stop losing money'. For an item's margin use
    margin_and_markup.
    中文：盈亏平衡点、保本点、保本销量、回本。

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
    """Year-by-year depreciation and book value of a fixed asset by the straight-line or the
    double-declining-balance method. Use it for accounting write-downs of equipment, vehicles or
    machinery. It does not value an asset on a market.
    中文：固定资产折旧、直线法、双倍余额递减法、账面价值。

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

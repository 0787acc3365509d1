"""E-commerce and pricing: discounts, VAT, margins, shipping weight, unit prices, card and barcode
checks, currency facts, marketing metrics."""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from toolcall_cli import tool

# ISO 4217: code -> (name, numeric code, minor units, symbol)
_CURRENCIES: dict[str, tuple[str, str, int, str]] = {
    "CNY": ("Chinese yuan renminbi", "156", 2, "¥"), "USD": ("US dollar", "840", 2, "$"),
    "EUR": ("Euro", "978", 2, "€"), "JPY": ("Japanese yen", "392", 0, "¥"),
    "GBP": ("Pound sterling", "826", 2, "£"), "HKD": ("Hong Kong dollar", "344", 2, "HK$"),
    "TWD": ("New Taiwan dollar", "901", 2, "NT$"), "KRW": ("South Korean won", "410", 0, "₩"),
    "SGD": ("Singapore dollar", "702", 2, "S$"), "AUD": ("Australian dollar", "036", 2, "A$"),
    "CAD": ("Canadian dollar", "124", 2, "C$"), "CHF": ("Swiss franc", "756", 2, "CHF"),
    "INR": ("Indian rupee", "356", 2, "₹"), "RUB": ("Russian ruble", "643", 2, "₽"),
    "BRL": ("Brazilian real", "986", 2, "R$"), "MXN": ("Mexican peso", "484", 2, "MX$"),
    "THB": ("Thai baht", "764", 2, "฿"), "VND": ("Vietnamese dong", "704", 0, "₫"),
    "KWD": ("Kuwaiti dinar", "414", 3, "KD"), "BHD": ("Bahraini dinar", "048", 3, "BD"),
    "SEK": ("Swedish krona", "752", 2, "kr"), "NZD": ("New Zealand dollar", "554", 2, "NZ$"),
    "AED": ("UAE dirham", "784", 2, "AED"), "ZAR": ("South African rand", "710", 2, "R"),
}  # fmt: skip
_CARD_BRANDS = (
    ("American Express", r"3[47]"), ("UnionPay", r"62"), ("Visa", r"4"),
    ("Mastercard", r"5[1-5]|2(?:2[2-9]|[3-6]\d|7[01]|720)"), ("Discover", r"6011|65"),
    ("JCB", r"35(?:2[89]|[3-8]\d)"),
)  # fmt: skip


def _money(value: float) -> float:
    return float(Decimal(str(value)).quantize(Decimal("0.01"), ROUND_HALF_UP))


@tool(permission="read")
def apply_discounts(
    price: float, percent_off: float = 0, amount_off: float = 0, minimum_spend: float = 0
) -> dict[str, Any]:
    """Final price after a percentage discount, then a money-off coupon if the spend reaches its
    minimum (满减), with the saving. Use it for 'what do I pay with 20% off and 30 off over
    200'. For VAT use vat_calculator.
    中文：折扣、满减、优惠券、打几折、到手价。

    Args:
        price: The original price or basket total.
        percent_off: A percentage discount, e.g. 20 for 20% off (八折).
        amount_off: A fixed coupon amount taken off after the percentage.
        minimum_spend: The spend needed for the coupon to apply.
    """
    after_percent = price * (1 - percent_off / 100)
    coupon_applies = after_percent >= minimum_spend
    final = max(after_percent - (amount_off if coupon_applies else 0), 0.0)
    return {
        "final_price": _money(final),
        "saved": _money(price - final),
        "coupon_applied": coupon_applies,
    }


@tool(permission="read")
def vat_calculator(
    amount: float, rate_percent: float, amount_includes_tax: bool = False
) -> dict[str, Any]:
    """Add VAT, GST or sales tax to a net price, or take it out of a gross (tax-inclusive) price.
    Use it for invoices, price lists and tax-included questions. For income tax use the payroll
    tools.
    中文：增值税、含税价、不含税价、税额、税率。

    Args:
        amount: The price.
        rate_percent: The tax rate, e.g. 13 or 20.
        amount_includes_tax: True when amount already includes the tax.
    """
    rate = rate_percent / 100
    net = amount / (1 + rate) if amount_includes_tax else amount
    return {"net": _money(net), "tax": _money(net * rate), "gross": _money(net * (1 + rate))}


@tool(permission="read")
def margin_and_markup(cost: float, price: float) -> dict[str, Any]:
    """Profit, gross margin (on price) and markup (on cost) of an item sold at a price. Use it
    for 'what margin do I make' and the difference between margin and markup. For the price that
    gives a target margin use price_for_target_margin.
    中文：毛利率、加价率、利润率、赚多少。

    Args:
        cost: What the item costs you.
        price: What you sell it for.
    """
    if price <= 0 or cost <= 0:
        raise ValueError("cost and price must be positive")
    profit = price - cost
    return {
        "profit": _money(profit),
        "margin_percent": round(profit / price * 100, 2),
        "markup_percent": round(profit / cost * 100, 2),
    }


@tool(permission="read")
def price_for_target_margin(cost: float, margin_percent: float) -> dict[str, Any]:
    """The selling price that gives a wanted gross margin on an item's cost. Use it for pricing
    products, e.g. 'what to charge for 40% margin'. For the margin of a known price use
    margin_and_markup.
    中文：按毛利定价、定价、售价多少、目标利润率。

    Args:
        cost: The unit cost.
        margin_percent: The margin wanted, as a percentage of the price (below 100).
    """
    if not 0 <= margin_percent < 100:
        raise ValueError("the margin must be from 0 to below 100 percent")
    price = cost / (1 - margin_percent / 100)
    return {"price": _money(price), "profit": _money(price - cost)}


@tool(permission="read")
def chargeable_shipping_weight(
    actual_kg: float, length_cm: float, width_cm: float, height_cm: float, divisor: int = 5000
) -> dict[str, Any]:
    """Chargeable (billable) weight of a parcel: the larger of its actual weight and its
    volumetric (dimensional) weight from the box size. Use it for courier and freight costs.
    中文：快递计费重量、体积重、抛货、运费重量。

    Args:
        actual_kg: The parcel's weight on the scale.
        length_cm: Length in cm.
        width_cm: Width in cm.
        height_cm: Height in cm.
        divisor: The carrier's volumetric divisor (5000 for most express, 6000 for some).
    """
    volumetric = length_cm * width_cm * height_cm / divisor
    return {
        "volumetric_kg": round(volumetric, 2),
        "chargeable_kg": round(max(actual_kg, volumetric), 2),
        "billed_by": "volume" if volumetric > actual_kg else "weight",
    }


@tool(permission="read")
def compare_unit_prices(offers: dict[str, list[float]]) -> dict[str, Any]:
    """Which pack or offer is the better deal: price per unit of each, cheapest first. Use it for
    supermarket comparisons like 'is the 500 g or 1 kg bag cheaper per gram'.
    中文：单价比较、哪个更划算、性价比、每克多少钱。

    Args:
        offers: Per offer name, [price, quantity], e.g. {"500g": [12.9, 500], "1kg": [22.5, 1000]}.
    """
    unit_prices: dict[str, float] = {}
    for name, pair in offers.items():
        if len(pair) != 2 or pair[1] <= 0:
            raise ValueError(f"{name}: give [price, quantity] with a positive quantity")
        unit_prices[name] = round(pair[0] / pair[1], 6)
    ranked = sorted(unit_prices, key=unit_prices.__getitem__)
    return {
        "ranked": [{"offer": name, "unit_price": unit_prices[name]} for name in ranked],
        "best": ranked[0] if ranked else None,
    }


@tool(permission="read")
def card_number_check(card_number: str) -> dict[str, Any]:
    """Check a payment card number with the Luhn checksum and tell its brand (Visa, Mastercard,
    UnionPay, Amex...). Use it to validate a bank or credit card number. For product barcodes
    use barcode_check_digit.
    中文：银行卡号校验、信用卡号验证、卡组织、银联。

    Args:
        card_number: The card number, spaces and dashes allowed.
    """
    digits = re.sub(r"[\s-]", "", card_number)
    if not digits.isdigit() or not 12 <= len(digits) <= 19:
        return {"valid": False, "reason": "a card number has 12-19 digits"}
    total = 0
    for i, d in enumerate(reversed(digits)):
        n = int(d) * (2 if i % 2 else 1)
        total += n - 9 if n > 9 else n
    brand = next((name for name, prefix in _CARD_BRANDS if re.match(prefix, digits)), "unknown")
    return {
        "valid": total % 10 == 0,
        "brand": brand,
        "masked": "*" * (len(digits) - 4) + digits[-4:],
    }


@tool(permission="read")
def barcode_check_digit(code: str, compute: bool = False) -> dict[str, Any]:
    """Validate an EAN-13, EAN-8 or UPC-A product barcode, or compute its missing check digit.
    Use it for retail product codes. For books use isbn_check; for payment cards use
    card_number_check.
    中文：商品条形码校验、条码校验位、EAN、UPC。

    Args:
        code: The barcode digits (spaces allowed).
        compute: True when code lacks its last digit and the check digit is wanted.
    """
    digits = re.sub(r"\D", "", code)
    lengths = (7, 11, 12) if compute else (8, 12, 13)
    if len(digits) not in lengths:
        raise ValueError(f"give {', '.join(map(str, lengths))} digits")
    body = digits if compute else digits[:-1]
    # Weights 3 and 1 alternate from the digit next to the check digit, for every length.
    total = sum(int(d) * (3 if i % 2 == 0 else 1) for i, d in enumerate(reversed(body)))
    check = (10 - total % 10) % 10
    if compute:
        return {"check_digit": check, "full_code": body + str(check)}
    return {"valid": int(digits[-1]) == check, "expected_check_digit": check}


@tool(permission="read")
def currency_info(code: str) -> dict[str, Any]:
    """ISO 4217 facts about a currency code: its name, numeric code, decimal places and symbol.
    Use it for 'what currency is CHF'. It does not give exchange rates.
    中文：货币代码、币种、货币符号、ISO货币。

    Args:
        code: The three-letter code, e.g. JPY, EUR, CNY.
    """
    key = code.strip().upper()
    if key not in _CURRENCIES:
        raise ValueError(f"{code!r} is not in the table; known: {', '.join(_CURRENCIES)}")
    name, numeric, minor, symbol = _CURRENCIES[key]
    return {
        "code": key,
        "name": name,
        "numeric": numeric,
        "decimal_places": minor,
        "symbol": symbol,
    }


@tool(permission="read")
def format_price(amount: float, currency: str) -> dict[str, Any]:
    """Write an amount the way a shop shows it in a currency: symbol, thousands separators and
    decimals. Use it for price labels and invoices. For currency facts use currency_info.
    中文：价格格式、货币符号、金额格式化、千分位。

    Args:
        amount: The amount.
        currency: The ISO currency code, e.g. USD or JPY.
    """
    info = currency_info(currency)
    places = info["decimal_places"]
    rounded = Decimal(str(amount)).quantize(Decimal(1).scaleb(-places), ROUND_HALF_UP)
    return {"text": f"{'-' if rounded < 0 else ''}{info['symbol']}{abs(rounded):,.{places}f}"}


@tool(permission="read")
def split_into_installments(
    total: float, installments: int, annual_fee_percent: float = 0.0
) -> dict[str, Any]:
    """Split a purchase into equal instalments with any fee; the last instalment takes the cents
    left over. Use it for buy-now-pay-later and credit card instalment plans. For a loan at an
    interest rate use loan_monthly_payment.
    中文：分期付款、分期手续费、每期还款、分几期。

    Args:
        total: The purchase price.
        installments: How many payments (1-60).
        annual_fee_percent: A flat yearly fee rate on the total, if the plan charges one.
    """
    if not 1 <= installments <= 60:
        raise ValueError("installments must be 1-60")
    with_fee = Decimal(str(total)) * (
        1 + Decimal(str(annual_fee_percent)) / 100 * installments / 12
    )
    cents = int((with_fee * 100).quantize(Decimal(1), ROUND_HALF_UP))
    each = cents // installments
    payments = [each] * (installments - 1) + [cents - each * (installments - 1)]
    return {"payments": [p / 100 for p in payments], "total_paid": cents / 100}


@tool(permission="read")
def marketing_metrics(
    revenue: float, ad_spend: float, visitors: int = 0, orders: int = 0, new_customers: int = 0
) -> dict[str, Any]:
    """Campaign figures: return on ad spend (ROAS), conversion rate, average order value and
    customer acquisition cost (CAC). Use it to judge an ad campaign or online shop performance.
    For lifetime value use customer_lifetime_value.
    中文：营销指标、ROAS、转化率、客单价、获客成本。

    Args:
        revenue: Revenue attributed to the campaign.
        ad_spend: What the campaign cost.
        visitors: Visits it brought (0 if unknown).
        orders: Orders placed (0 if unknown).
        new_customers: New customers won (0 if unknown).
    """
    return {
        "roas": round(revenue / ad_spend, 2) if ad_spend else None,
        "conversion_rate_percent": round(orders / visitors * 100, 2) if visitors else None,
        "average_order_value": _money(revenue / orders) if orders else None,
        "cac": _money(ad_spend / new_customers) if new_customers else None,
    }


@tool(permission="read")
def customer_lifetime_value(
    average_order_value: float,
    orders_per_year: float,
    gross_margin_percent: float,
    retention_years: float,
) -> dict[str, Any]:
    """Customer lifetime value (CLV/LTV): the gross margin a typical customer brings over the
    years they stay. Use it to decide how much to spend acquiring customers. For campaign
    metrics use marketing_metrics.
    中文：客户生命周期价值、LTV、用户价值。

    Args:
        average_order_value: The average spend per order.
        orders_per_year: How often a customer orders per year.
        gross_margin_percent: The gross margin on sales in percent.
        retention_years: How many years a customer typically stays.
    """
    yearly = average_order_value * orders_per_year * gross_margin_percent / 100
    return {"yearly_margin": _money(yearly), "lifetime_value": _money(yearly * retention_years)}

"""Maths and statistics: summaries, regression, probability, number theory, equations, fractions."""

from __future__ import annotations

import math
import statistics
from fractions import Fraction
from typing import Any

from toolcall_cli import tool

MAX_COUNT = 10_000


def _numbers(values: list[float], at_least: int = 1) -> list[float]:
    if len(values) < at_least:
        raise ValueError(f"give at least {at_least} numbers")
    if len(values) > MAX_COUNT:
        raise ValueError(f"at most {MAX_COUNT} numbers")
    return [float(v) for v in values]


def _r(value: float) -> float:
    return round(value, 6)


@tool(permission="read")
def describe_numbers(values: list[float]) -> dict[str, Any]:
    """Summary statistics of a list of numbers: count, sum, mean, median, modes, sample and
    population standard deviation, minimum and maximum. Use it for 'what is the average of these
    scores' or basic data analysis. For percentiles use percentile; for weights use
    weighted_average.
    中文：描述统计、平均数、中位数、众数、标准差、方差。

    Args:
        values: The data, e.g. [3, 7, 7, 2, 9].
    """
    data = _numbers(values)
    return {
        "count": len(data),
        "mean": _r(statistics.fmean(data)),
        "median": _r(statistics.median(data)),
        "modes": statistics.multimode(data),
        "sample_stdev": _r(statistics.stdev(data)) if len(data) > 1 else 0.0,
        "population_stdev": _r(statistics.pstdev(data)),
        "min": min(data),
        "max": max(data),
        "sum": _r(math.fsum(data)),
    }


@tool(permission="read")
def percentile(values: list[float], percent: float) -> dict[str, Any]:
    """The value below which a given percentage of the data falls (linear interpolation), e.g.
    p95 or the 90th percentile, quartiles. Use it for latency percentiles, test score ranks and
    thresholds. For a full summary use describe_numbers.
    中文：百分位数、分位数、四分位、P95。

    Args:
        values: The data.
        percent: The percentile wanted, 0-100.
    """
    data = sorted(_numbers(values))
    if not 0 <= percent <= 100:
        raise ValueError("percent is between 0 and 100")
    position = (len(data) - 1) * percent / 100
    low, high = math.floor(position), math.ceil(position)
    value = data[low] + (data[high] - data[low]) * (position - low)
    return {"percentile": percent, "value": _r(value)}


@tool(permission="read")
def linear_regression(x: list[float], y: list[float]) -> dict[str, Any]:
    """Least-squares straight line y = slope·x + intercept through paired data, with R² (how well
    the line fits). Use it for line of best fit, trends and simple forecasts. For the strength
    of a relation only use correlation_coefficient.
    中文：线性回归、拟合直线、趋势线、最小二乘法。

    Args:
        x: The x values.
        y: The y values, one per x.
    """
    xs, ys = _numbers(x, 2), _numbers(y, 2)
    if len(xs) != len(ys):
        raise ValueError("x and y need the same number of values")
    slope, intercept = statistics.linear_regression(xs, ys)
    r = statistics.correlation(xs, ys)
    return {"slope": _r(slope), "intercept": _r(intercept), "r_squared": _r(r * r)}


@tool(permission="read")
def correlation_coefficient(x: list[float], y: list[float]) -> dict[str, Any]:
    """Pearson correlation coefficient between two series, from -1 to 1, with a plain-words
    strength. Use it for 'are these two things related'. For the fitted line use
    linear_regression.
    中文：相关系数、相关性、皮尔逊相关。

    Args:
        x: The first series.
        y: The second series, same length.
    """
    xs, ys = _numbers(x, 2), _numbers(y, 2)
    if len(xs) != len(ys):
        raise ValueError("the series need the same length")
    r = statistics.correlation(xs, ys)
    strength = "strong" if abs(r) >= 0.7 else "moderate" if abs(r) >= 0.4 else "weak"
    return {"r": _r(r), "strength": strength, "direction": "positive" if r >= 0 else "negative"}


@tool(permission="read")
def z_score(value: float, mean: float, stdev: float) -> dict[str, Any]:
    """Standard score: how many standard deviations a value lies from the mean, and its
    percentile if normally distributed. Use it for test scores, outliers and standardising. For
    probabilities between limits use normal_probability.
    中文：标准分、Z分数、标准差倍数、排名百分比。

    Args:
        value: The observation.
        mean: The population mean.
        stdev: The population standard deviation.
    """
    if stdev <= 0:
        raise ValueError("stdev must be positive")
    z = (value - mean) / stdev
    return {"z": _r(z), "percentile": round(statistics.NormalDist().cdf(z) * 100, 2)}


@tool(permission="read")
def normal_probability(
    mean: float, stdev: float, lower: float | None = None, upper: float | None = None
) -> dict[str, Any]:
    """Probability that a normally distributed value falls below, above or between limits, given
    the mean and standard deviation. Use it for bell-curve questions like 'what share is taller
    than 180 cm'.
    中文：正态分布概率、钟形曲线、概率计算。

    Args:
        mean: The distribution's mean.
        stdev: Its standard deviation.
        lower: The lower limit (none for minus infinity).
        upper: The upper limit (none for plus infinity).
    """
    dist = statistics.NormalDist(mean, stdev)
    low = dist.cdf(lower) if lower is not None else 0.0
    high = dist.cdf(upper) if upper is not None else 1.0
    return {"probability": _r(high - low)}


@tool(permission="read")
def binomial_probability(trials: int, successes: int, p: float) -> dict[str, Any]:
    """Binomial probability: chance of exactly k successes in n independent tries with success
    chance p, and of at least k. Use it for coin flips, dice, pass rates and defect counts. For
    counting choices use combinations_and_permutations.
    中文：二项分布概率、抛硬币概率、成功次数。

    Args:
        trials: The number of tries n.
        successes: The number of successes k.
        p: The chance of success on each try, 0-1.
    """
    if not 0 <= successes <= trials <= 10_000 or not 0 <= p <= 1:
        raise ValueError("need 0 <= successes <= trials <= 10000 and 0 <= p <= 1")

    def exactly(k: int) -> float:
        return math.comb(trials, k) * p**k * (1 - p) ** (trials - k)

    return {
        "exactly": _r(exactly(successes)),
        "at_least": _r(math.fsum(exactly(k) for k in range(successes, trials + 1))),
    }


@tool(permission="read")
def combinations_and_permutations(n: int, k: int) -> dict[str, Any]:
    """Ways to choose k of n items: combinations C(n,k) where order does not matter and
    permutations P(n,k) where it does. Use it for lottery odds, teams, seating arrangements and
    counting problems.
    中文：排列组合、组合数、排列数、有几种选法。

    Args:
        n: The number of items.
        k: How many are chosen.
    """
    if not 0 <= k <= n <= 1000:
        raise ValueError("need 0 <= k <= n <= 1000")
    return {"combinations": math.comb(n, k), "permutations": math.perm(n, k)}


@tool(permission="read")
def prime_factorization(number: int) -> dict[str, Any]:
    """Break a whole number into its prime factors, e.g. 360 = 2^3 × 3^2 × 5, and say whether it
    is prime. Use it for factorisation homework and 'is this number prime'. For GCD and LCM use
    gcd_and_lcm.
    中文：分解质因数、质数判断、素数、因数。

    Args:
        number: A whole number from 2 to 10^12.
    """
    if not 2 <= number <= 10**12:
        raise ValueError("number must be between 2 and 10^12")
    factors: dict[int, int] = {}
    rest, divisor = number, 2
    while divisor * divisor <= rest:
        while rest % divisor == 0:
            factors[divisor] = factors.get(divisor, 0) + 1
            rest //= divisor
        divisor += 1 if divisor == 2 else 2
    if rest > 1:
        factors[rest] = factors.get(rest, 0) + 1
    text = " × ".join(f"{p}^{e}" if e > 1 else str(p) for p, e in factors.items())
    return {
        "factors": {str(p): e for p, e in factors.items()},
        "text": f"{number} = {text}",
        "is_prime": list(factors.values()) == [1] and number in factors,
    }


@tool(permission="read")
def gcd_and_lcm(numbers: list[int]) -> dict[str, Any]:
    """Greatest common divisor (highest common factor) and least common multiple of two or more
    whole numbers. Use it for fractions, schedules that coincide and maths homework. To reduce a
    fraction use simplify_fraction.
    中文：最大公约数、最小公倍数、公因数。

    Args:
        numbers: Two or more whole numbers.
    """
    if len(numbers) < 2:
        raise ValueError("give at least two numbers")
    return {"gcd": math.gcd(*numbers), "lcm": math.lcm(*numbers)}


@tool(permission="read")
def fibonacci(n: int) -> dict[str, Any]:
    """The n-th Fibonacci number (F(0)=0, F(1)=1) and the first terms of the sequence. Use it for
    Fibonacci sequence questions.
    中文：斐波那契数列、兔子数列、第n项。

    Args:
        n: The index, 0-1000.
    """
    if not 0 <= n <= 1000:
        raise ValueError("n must be between 0 and 1000")
    a, b = 0, 1
    terms = []
    for _ in range(n):
        terms.append(a)
        a, b = b, a + b
    return {"value": str(a) if a > 2**53 else a, "first_terms": terms[:15]}


@tool(permission="read")
def solve_quadratic(a: float, b: float, c: float) -> dict[str, Any]:
    """Roots of a quadratic equation ax² + bx + c = 0, real or complex, with the discriminant.
    Use it for solving second-degree equations. It does not solve other equation types.
    中文：一元二次方程、求根公式、方程求解、判别式。

    Args:
        a: The x² coefficient (not 0).
        b: The x coefficient.
        c: The constant term.
    """
    if a == 0:
        raise ValueError("a must not be 0 for a quadratic")
    disc = b * b - 4 * a * c
    if disc >= 0:
        root = math.sqrt(disc)
        roots = sorted({_r((-b - root) / (2 * a)), _r((-b + root) / (2 * a))})
        return {"discriminant": disc, "real_roots": roots}
    real, imag = -b / (2 * a), math.sqrt(-disc) / (2 * abs(a))
    return {
        "discriminant": disc,
        "complex_roots": [f"{_r(real)}-{_r(imag)}i", f"{_r(real)}+{_r(imag)}i"],
    }


@tool(permission="read")
def weighted_average(values: list[float], weights: list[float]) -> dict[str, Any]:
    """Weighted average (weighted mean) where each value counts by its weight, e.g. a course
    grade from weighted components or GPA by credits. For a plain mean use describe_numbers.
    中文：加权平均、加权平均分、绩点、权重。

    Args:
        values: The values, e.g. scores.
        weights: One weight per value, e.g. credits or percentages.
    """
    if len(values) != len(weights) or not values:
        raise ValueError("give one weight per value")
    total = math.fsum(weights)
    if total == 0:
        raise ValueError("the weights sum to zero")
    return {
        "weighted_average": _r(
            math.fsum(v * w for v, w in zip(values, weights, strict=True)) / total
        )
    }


@tool(permission="read")
def moving_average(values: list[float], window: int = 3) -> dict[str, Any]:
    """Simple moving average of a series over a sliding window, to smooth noise or show a trend,
    e.g. a 7-day average. For a single overall mean use describe_numbers.
    中文：移动平均、滑动平均、均线、平滑。

    Args:
        values: The series, in time order.
        window: How many points each average covers.
    """
    data = _numbers(values, max(window, 1))
    if window < 1:
        raise ValueError("window must be at least 1")
    return {
        "averages": [
            _r(statistics.fmean(data[i - window : i])) for i in range(window, len(data) + 1)
        ]
    }


@tool(permission="read")
def simplify_fraction(numerator: int, denominator: int) -> dict[str, Any]:
    """Reduce a fraction to lowest terms, with its mixed-number and decimal forms. Use it for
    fraction homework and recipes. For GCD and LCM use gcd_and_lcm.
    中文：约分、化简分数、最简分数、带分数。

    Args:
        numerator: The top number.
        denominator: The bottom number (not 0).
    """
    if denominator == 0:
        raise ValueError("the denominator cannot be 0")
    f = Fraction(numerator, denominator)
    whole, rest = divmod(abs(f.numerator), f.denominator)
    sign = "-" if f < 0 else ""
    mixed = f"{sign}{whole} {rest}/{f.denominator}" if whole and rest else str(f)
    return {"fraction": str(f), "mixed": mixed, "decimal": float(f)}


@tool(permission="read")
def roman_numerals(value: str) -> dict[str, Any]:
    """Convert between Roman numerals and ordinary numbers from 1 to 3999, e.g. 2024 <-> MMXXIV.
    Use it for dates on buildings, film credits, clock faces and outlines.
    中文：罗马数字、罗马数字转换。

    Args:
        value: A number such as 1987, or a numeral such as MCMLXXXVII.
    """
    table = [
        (1000, "M"),
        (900, "CM"),
        (500, "D"),
        (400, "CD"),
        (100, "C"),
        (90, "XC"),
        (50, "L"),
        (40, "XL"),
        (10, "X"),
        (9, "IX"),
        (5, "V"),
        (4, "IV"),
        (1, "I"),
    ]
    text = value.strip().upper()

    def to_roman(number: int) -> str:
        out = []
        for amount, letters in table:
            count, number = divmod(number, amount)
            out.append(letters * count)
        return "".join(out)

    if text.isdigit():
        number = int(text)
        if not 1 <= number <= 3999:
            raise ValueError("Roman numerals cover 1 to 3999")
        return {"roman": to_roman(number), "number": number}
    values = {letters: amount for amount, letters in table if len(letters) == 1}
    if not text or any(c not in values for c in text):
        raise ValueError(f"{value!r} is neither a number nor a Roman numeral")
    total = sum(
        -values[c] if i + 1 < len(text) and values[c] < values[text[i + 1]] else values[c]
        for i, c in enumerate(text)
    )
    if to_roman(total) != text:
        raise ValueError(f"{text} is not a well-formed numeral (did you mean {to_roman(total)}?)")
    return {"roman": text, "number": total}


@tool(permission="read")
def percentage_change(old_value: float, new_value: float) -> dict[str, Any]:
    """Percentage increase or decrease from an old value to a new one, with the absolute
    difference. Use it for growth rates, price rises, year-on-year change and 'how much did it
    go up'. For a yearly compound rate use annualized_return.
    中文：增长率、涨幅、降幅、同比环比、变化百分比。

    Args:
        old_value: The earlier value (not 0).
        new_value: The later value.
    """
    if old_value == 0:
        raise ValueError("the old value cannot be 0")
    change = (new_value - old_value) / abs(old_value) * 100
    return {"percent_change": round(change, 4), "difference": new_value - old_value}

"""Kitchen and everyday measures: cups and spoons, ingredient weights, oven marks, area, speed,
pressure, energy, fuel economy and shoe sizes. (Length, mass and temperature are the bundled
convert_units tool's job.)"""

from __future__ import annotations

from typing import Any

from toolcall_cli import tool

_VOLUME_ML: dict[str, float] = {
    "ml": 1.0, "l": 1000.0, "tsp": 4.92892, "tbsp": 14.7868, "cup": 236.588, "fl oz": 29.5735,
    "pint": 473.176, "quart": 946.353, "gallon": 3785.41, "metric cup": 250.0,
    "uk pint": 568.261, "uk gallon": 4546.09,
}  # fmt: skip
_VOLUME_ALIASES = {
    "milliliter": "ml", "millilitre": "ml", "毫升": "ml", "liter": "l", "litre": "l", "升": "l",
    "teaspoon": "tsp", "茶匙": "tsp", "小勺": "tsp", "tablespoon": "tbsp", "汤匙": "tbsp",
    "大勺": "tbsp", "cups": "cup", "杯": "cup", "fluid ounce": "fl oz", "floz": "fl oz",
    "pints": "pint", "quarts": "quart", "gallons": "gallon", "加仑": "gallon",
}  # fmt: skip

# Grams in one US cup (236.6 ml), spooned and levelled.
_GRAMS_PER_CUP: dict[str, float] = {
    "all-purpose flour": 125, "bread flour": 127, "whole wheat flour": 120,
    "granulated sugar": 200, "brown sugar": 213, "powdered sugar": 120, "butter": 227,
    "water": 237, "milk": 245, "honey": 340, "rice": 185, "rolled oats": 90,
    "cocoa powder": 85, "chopped nuts": 120, "vegetable oil": 218, "salt": 292,
}  # fmt: skip

_GAS_MARKS = {1: 140, 2: 150, 3: 170, 4: 180, 5: 190, 6: 200, 7: 220, 8: 230, 9: 240}

_AREA_M2: dict[str, float] = {
    "m2": 1.0, "km2": 1e6, "cm2": 1e-4, "ft2": 0.09290304, "in2": 0.00064516,
    "yd2": 0.83612736, "acre": 4046.8564224, "hectare": 10000.0, "mu": 10000 / 15,
    "sq mi": 2589988.110336, "ping": 3.305785,
}  # fmt: skip
_AREA_ALIASES = {
    "平方米": "m2", "平米": "m2", "sqm": "m2", "平方公里": "km2", "平方厘米": "cm2",
    "sq ft": "ft2", "square feet": "ft2", "平方英尺": "ft2", "sq in": "in2", "sq yd": "yd2",
    "acres": "acre", "英亩": "acre", "ha": "hectare", "hectares": "hectare", "公顷": "hectare",
    "亩": "mu", "square miles": "sq mi", "坪": "ping",
}  # fmt: skip

_SPEED_MS = {"m/s": 1.0, "km/h": 1 / 3.6, "mph": 0.44704, "knot": 0.514444, "ft/s": 0.3048}
_PRESSURE_PA = {"pa": 1.0, "kpa": 1000.0, "bar": 1e5, "psi": 6894.757293168, "atm": 101325.0,
                "mmhg": 133.322387415, "inhg": 3386.389, "mpa": 1e6}  # fmt: skip
_ENERGY_J = {"j": 1.0, "kj": 1000.0, "cal": 4.184, "kcal": 4184.0, "wh": 3600.0,
             "kwh": 3.6e6, "btu": 1055.06, "ev": 1.602176634e-19}  # fmt: skip


def _pick(table: dict[str, float], aliases: dict[str, str], unit: str, kind: str) -> float:
    key = unit.strip().lower()
    key = aliases.get(key, key)
    if key not in table:
        raise ValueError(f"unknown {kind} unit {unit!r}; known: {', '.join(table)}")
    return table[key]


def _tidy(value: float) -> float:
    return float(f"{value:.6g}")


@tool(permission="read")
def convert_cooking_volume(amount: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert kitchen volume measures between cups, tablespoons, teaspoons, fluid ounces,
    millilitres and litres. Use it for recipes from another country, 'how many ml in a cup' or
    'tablespoons in 1/4 cup'. To turn cups of an ingredient into grams use cups_to_grams.
    中文：量杯量勺换算、一杯多少毫升、一汤匙多少毫升、烘焙。

    Args:
        amount: How much, e.g. 1.5.
        from_unit: cup, tbsp, tsp, fl oz, ml, l, pint, quart, gallon (US) or 杯/汤匙/茶匙/毫升.
        to_unit: The unit wanted.
    """
    ml = amount * _pick(_VOLUME_ML, _VOLUME_ALIASES, from_unit, "volume")
    return {"result": _tidy(ml / _pick(_VOLUME_ML, _VOLUME_ALIASES, to_unit, "volume"))}


@tool(permission="read")
def cups_to_grams(ingredient: str, cups: float) -> dict[str, Any]:
    """Weigh out a recipe ingredient given in US cups (flour, sugar, butter, rice, milk...) in
    grams, by that ingredient's density. Use it for baking by weight and 'how many grams is a
    cup of flour'. For volume-to-volume use convert_cooking_volume.
    中文：一杯面粉多少克、量杯转克、黄油克数、烘焙称重。

    Args:
        ingredient: e.g. all-purpose flour, granulated sugar, butter, honey, rice.
        cups: The number of cups.
    """
    key = ingredient.strip().lower()
    grams = _GRAMS_PER_CUP.get(key) or _GRAMS_PER_CUP.get(f"{key} flour")
    if grams is None:
        raise ValueError(f"no density for {ingredient!r}; known: {', '.join(_GRAMS_PER_CUP)}")
    return {"grams": round(grams * cups)}


@tool(permission="read")
def scale_recipe(
    ingredients: dict[str, float], servings_from: int, servings_to: int
) -> dict[str, Any]:
    """Scale every ingredient quantity of a recipe from one number of servings to another. Use it
    to halve, double or resize a recipe for more or fewer people. For a different cake tin size
    use baking_pan_conversion.
    中文：菜谱份量换算、食材用量、几人份、配方加倍。

    Args:
        ingredients: Quantity per ingredient, e.g. {"flour g": 250, "eggs": 2}.
        servings_from: Servings the recipe makes.
        servings_to: Servings wanted.
    """
    if servings_from <= 0:
        raise ValueError("servings_from must be positive")
    factor = servings_to / servings_from
    return {
        "factor": round(factor, 4),
        "ingredients": {name: _tidy(qty * factor) for name, qty in ingredients.items()},
    }


@tool(permission="read")
def oven_temperature(gas_mark: int = 0, celsius: float = 0) -> dict[str, Any]:
    """Translate an oven gas mark to °C and °F (and the fan-oven °C), or a °C setting to the
    nearest gas mark. Use it for British recipes and different ovens. Plain °C/°F conversion is
    convert_units's job.
    中文：烤箱温度、燃气档位、风扇烤箱、烘烤温度。

    Args:
        gas_mark: A British gas mark 1-9 (0 when converting from celsius).
        celsius: A conventional oven temperature in °C (used when gas_mark is 0).
    """
    if gas_mark:
        if gas_mark not in _GAS_MARKS:
            raise ValueError("gas marks run from 1 to 9")
        c = _GAS_MARKS[gas_mark]
        return {"celsius": c, "fahrenheit": round(c * 9 / 5 + 32), "fan_celsius": c - 20}
    if celsius <= 0:
        raise ValueError("give a gas mark (1-9) or an oven temperature in °C")
    mark = min(_GAS_MARKS, key=lambda m: abs(_GAS_MARKS[m] - celsius))
    return {"gas_mark": mark, "fan_celsius": round(celsius - 20)}


@tool(permission="read")
def meat_doneness_temperature(meat: str, doneness: str = "medium") -> dict[str, Any]:
    """Internal core temperature to cook for beef, lamb, pork, chicken or fish at a doneness
    (rare, medium, well done). Use it for steak doneness, roasting and thermometer readings.
    中文：肉类熟度温度、牛排几分熟、中心温度、烤肉温度。

    Args:
        meat: beef, lamb, pork, chicken, turkey or fish.
        doneness: rare, medium_rare, medium or well_done (beef, lamb); others have one value.
    """
    red = {"rare": 52, "medium_rare": 57, "medium": 63, "well_done": 71}
    safe = {"pork": 63, "chicken": 74, "turkey": 74, "fish": 63}
    kind = meat.strip().lower()
    if kind in ("beef", "lamb"):
        if doneness not in red:
            raise ValueError(f"doneness is one of {', '.join(red)}")
        c = red[doneness]
    elif kind in safe:
        c = safe[kind]
    else:
        raise ValueError("meat is beef, lamb, pork, chicken, turkey or fish")
    return {"celsius": c, "fahrenheit": round(c * 9 / 5 + 32)}


@tool(permission="read")
def baking_pan_conversion(
    from_diameter_cm: float,
    to_diameter_cm: float,
    from_square: bool = False,
    to_square: bool = False,
) -> dict[str, Any]:
    """How much to multiply a cake recipe by when baking in a different size round or square tin,
    from the pans' areas. Use it for 'my recipe is for a 20 cm tin, I have a 24 cm'. For
    servings use scale_recipe.
    中文：烤模尺寸换算、蛋糕模具换算、几寸蛋糕、配方比例。

    Args:
        from_diameter_cm: The recipe's tin: diameter if round, side if square, in cm.
        to_diameter_cm: Your tin: diameter if round, side if square, in cm.
        from_square: The recipe's tin is square.
        to_square: Your tin is square.
    """

    def area(size: float, square: bool) -> float:
        return size * size if square else 3.141592653589793 * (size / 2) ** 2

    factor = area(to_diameter_cm, to_square) / area(from_diameter_cm, from_square)
    return {"multiply_ingredients_by": round(factor, 2)}


@tool(permission="read")
def convert_area(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert land and floor areas between square metres, square feet, acres, hectares, mu,
    square kilometres, ping and square centimetres, square yards and square miles. Use it for
    flats, plots and farmland, e.g. 'how many square metres is one mu'.
    中文：面积换算、亩、平方米、公顷、平方英尺、坪。

    Args:
        value: The area.
        from_unit: m2, km2, cm2, ft2, in2, yd2, acre, hectare, mu (亩), sq mi, ping (坪) or 平方米.
        to_unit: The unit wanted.
    """
    m2 = value * _pick(_AREA_M2, _AREA_ALIASES, from_unit, "area")
    return {"result": _tidy(m2 / _pick(_AREA_M2, _AREA_ALIASES, to_unit, "area"))}


@tool(permission="read")
def convert_speed(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert speeds between km/h, mph, m/s, knots and ft/s. Use it for speed limits, wind
    speed, running pace and boat or aircraft speeds.
    中文：速度换算、时速、公里每小时、英里每小时、节、风速。

    Args:
        value: The speed.
        from_unit: km/h, mph, m/s, knot or ft/s.
        to_unit: The unit wanted.
    """
    aliases = {"kmh": "km/h", "kph": "km/h", "knots": "knot", "kn": "knot", "mps": "m/s"}
    ms = value * _pick(_SPEED_MS, aliases, from_unit, "speed")
    return {"result": _tidy(ms / _pick(_SPEED_MS, aliases, to_unit, "speed"))}


@tool(permission="read")
def convert_pressure(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert pressures between psi, bar, kPa, MPa, Pa, atm, mmHg and inHg. Use it for tyre
    pressure, weather barometer readings, blood pressure and diving.
    中文：压强换算、胎压、气压、大气压、帕斯卡。

    Args:
        value: The pressure.
        from_unit: pa, kpa, mpa, bar, psi, atm, mmhg or inhg.
        to_unit: The unit wanted.
    """
    pa = value * _pick(_PRESSURE_PA, {}, from_unit, "pressure")
    return {"result": _tidy(pa / _pick(_PRESSURE_PA, {}, to_unit, "pressure"))}


@tool(permission="read")
def convert_energy(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert energy between joules, kJ, calories, kcal (food Calories), Wh, kWh, BTU and eV.
    Use it for food energy labels, electricity use and heating. For calories burned by exercise
    use calories_burned.
    中文：能量换算、千卡、焦耳、度电、卡路里、千瓦时。

    Args:
        value: The amount of energy.
        from_unit: j, kj, cal, kcal, wh, kwh, btu or ev.
        to_unit: The unit wanted.
    """
    aliases = {"千卡": "kcal", "大卡": "kcal", "度": "kwh", "千瓦时": "kwh", "焦耳": "j"}
    joules = value * _pick(_ENERGY_J, aliases, from_unit, "energy")
    return {"result": _tidy(joules / _pick(_ENERGY_J, aliases, to_unit, "energy"))}


@tool(permission="read")
def fuel_economy_convert(value: float, from_unit: str) -> dict[str, Any]:
    """Convert car fuel consumption between L/100 km, US mpg, UK mpg and km/L. Use it to compare
    car fuel efficiency across countries. For a trip's fuel cost use road_trip_fuel_cost.
    中文：油耗换算、百公里油耗、MPG、省油。

    Args:
        value: The figure, e.g. 7.5.
        from_unit: l/100km, mpg_us, mpg_uk or km/l.
    """
    to_km_per_l = {
        "l/100km": lambda v: 100 / v,
        "mpg_us": lambda v: v * 1.609344 / 3.785411784,
        "mpg_uk": lambda v: v * 1.609344 / 4.54609,
        "km/l": lambda v: v,
    }
    unit = from_unit.strip().lower()
    if unit not in to_km_per_l or value <= 0:
        raise ValueError("from_unit is l/100km, mpg_us, mpg_uk or km/l, and value must be positive")
    kml = to_km_per_l[unit](value)
    return {
        "l_per_100km": round(100 / kml, 2),
        "mpg_us": round(kml * 3.785411784 / 1.609344, 1),
        "mpg_uk": round(kml * 4.54609 / 1.609344, 1),
        "km_per_l": round(kml, 2),
    }


@tool(permission="read")
def shoe_size_convert(foot_length_cm: float) -> dict[str, Any]:
    """Shoe sizes (EU, UK, US men's and women's, Chinese mm) that fit a foot of a given length in
    cm. Use it for buying shoes abroad or online size charts.
    中文：鞋码换算、欧码、美码、尺码对照、脚长。

    Args:
        foot_length_cm: The length of the foot in centimetres, heel to longest toe.
    """
    last_cm = foot_length_cm + 1.5  # a shoe's inside is about 1.5 cm longer than the foot
    eu = last_cm * 1.5
    uk = 3 * last_cm / 2.54 - 25  # the adult UK scale: barleycorns (1/3 inch) from 25
    return {
        "eu": round(eu * 2) / 2,
        "uk": round(uk * 2) / 2,
        "us_men": round((uk + 1) * 2) / 2,
        "us_women": round((uk + 2) * 2) / 2,
        "china_mm": round(foot_length_cm * 2) * 5,
    }

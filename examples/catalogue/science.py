"""Chemistry and physics: the periodic table, molar mass, gases, circuits, motion, waves, decay."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from datetime import date
from typing import Any, Literal

from toolcall_cli import tool

G = 9.80665
GAS_CONSTANT = 8.314462618
LIGHT_SPEED = 299_792_458.0
PLANCK = 6.62607015e-34
ELECTRON_VOLT = 1.602176634e-19

# symbol: (number, English name, Chinese name, standard atomic weight)
_ELEMENTS: dict[str, tuple[int, str, str, float]] = {
    "H": (1, "Hydrogen", "氢", 1.008), "He": (2, "Helium", "氦", 4.0026),
    "Li": (3, "Lithium", "锂", 6.94), "Be": (4, "Beryllium", "铍", 9.0122),
    "B": (5, "Boron", "硼", 10.81), "C": (6, "Carbon", "碳", 12.011),
    "N": (7, "Nitrogen", "氮", 14.007), "O": (8, "Oxygen", "氧", 15.999),
    "F": (9, "Fluorine", "氟", 18.998), "Ne": (10, "Neon", "氖", 20.180),
    "Na": (11, "Sodium", "钠", 22.990), "Mg": (12, "Magnesium", "镁", 24.305),
    "Al": (13, "Aluminium", "铝", 26.982), "Si": (14, "Silicon", "硅", 28.085),
    "P": (15, "Phosphorus", "磷", 30.974), "S": (16, "Sulfur", "硫", 32.06),
    "Cl": (17, "Chlorine", "氯", 35.45), "Ar": (18, "Argon", "氩", 39.948),
    "K": (19, "Potassium", "钾", 39.098), "Ca": (20, "Calcium", "钙", 40.078),
    "Sc": (21, "Scandium", "钪", 44.956), "Ti": (22, "Titanium", "钛", 47.867),
    "V": (23, "Vanadium", "钒", 50.942), "Cr": (24, "Chromium", "铬", 51.996),
    "Mn": (25, "Manganese", "锰", 54.938), "Fe": (26, "Iron", "铁", 55.845),
    "Co": (27, "Cobalt", "钴", 58.933), "Ni": (28, "Nickel", "镍", 58.693),
    "Cu": (29, "Copper", "铜", 63.546), "Zn": (30, "Zinc", "锌", 65.38),
    "Ga": (31, "Gallium", "镓", 69.723), "Ge": (32, "Germanium", "锗", 72.630),
    "As": (33, "Arsenic", "砷", 74.922), "Se": (34, "Selenium", "硒", 78.971),
    "Br": (35, "Bromine", "溴", 79.904), "Kr": (36, "Krypton", "氪", 83.798),
    "Rb": (37, "Rubidium", "铷", 85.468), "Sr": (38, "Strontium", "锶", 87.62),
    "Ag": (47, "Silver", "银", 107.87), "Sn": (50, "Tin", "锡", 118.71),
    "I": (53, "Iodine", "碘", 126.90), "Xe": (54, "Xenon", "氙", 131.29),
    "Cs": (55, "Caesium", "铯", 132.91), "Ba": (56, "Barium", "钡", 137.33),
    "W": (74, "Tungsten", "钨", 183.84), "Pt": (78, "Platinum", "铂", 195.08),
    "Au": (79, "Gold", "金", 196.97), "Hg": (80, "Mercury", "汞", 200.59),
    "Pb": (82, "Lead", "铅", 207.2), "Rn": (86, "Radon", "氡", 222.0),
    "Ra": (88, "Radium", "镭", 226.0), "U": (92, "Uranium", "铀", 238.03),
    "Pu": (94, "Plutonium", "钚", 244.0),
}  # fmt: skip

_GRAVITY: dict[str, float] = {
    "mercury": 3.70, "venus": 8.87, "earth": 9.807, "moon": 1.62, "mars": 3.71,
    "jupiter": 24.79, "saturn": 10.44, "uranus": 8.69, "neptune": 11.15, "pluto": 0.62,
}  # fmt: skip
_PLANETS_ZH = {"水星": "mercury", "金星": "venus", "地球": "earth", "月球": "moon", "月亮": "moon",
               "火星": "mars", "木星": "jupiter", "土星": "saturn", "天王星": "uranus",
               "海王星": "neptune", "冥王星": "pluto"}  # fmt: skip

_BANDS = ["black", "brown", "red", "orange", "yellow", "green", "blue", "violet", "grey", "white"]
_TOLERANCE = {
    "brown": 1,
    "red": 2,
    "green": 0.5,
    "blue": 0.25,
    "violet": 0.1,
    "gold": 5,
    "silver": 10,
}


def _element(query: str) -> tuple[str, tuple[int, str, str, float]]:
    text = query.strip()
    for symbol, info in _ELEMENTS.items():
        if text in (symbol, info[2]) or text.lower() == info[1].lower() or text == str(info[0]):
            return symbol, info
    raise ValueError(f"{query!r} is not in the element table (symbol, name, 中文名 or number)")


@tool(permission="read")
def element_lookup(element: str) -> dict[str, Any]:
    """Periodic table facts for a chemical element by name, symbol or atomic number: symbol,
    atomic number, English and Chinese names, atomic weight. Use it for 'what is element 26' or
    'what is the symbol for gold'. For a compound's weight use molar_mass.
    中文：化学元素、元素周期表、元素符号、原子序数、原子量。

    Args:
        element: A symbol (Fe), English name (iron), Chinese name (铁) or atomic number (26).
    """
    symbol, (number, name, zh, weight) = _element(element)
    return {
        "symbol": symbol,
        "atomic_number": number,
        "name": name,
        "name_zh": zh,
        "atomic_weight": weight,
    }


def _formula_counts(formula: str) -> dict[str, float]:
    tokens = re.findall(r"([A-Z][a-z]?|\(|\)|\d+)", formula.replace("[", "(").replace("]", ")"))
    if "".join(tokens) != formula.replace("[", "(").replace("]", ")").replace(" ", ""):
        raise ValueError(f"cannot read the formula {formula!r}")
    stack: list[dict[str, float]] = [{}]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "(":
            stack.append({})
            continue
        multiplier = 1
        if i < len(tokens) and tokens[i].isdigit():
            multiplier, i = int(tokens[i]), i + 1
        if token == ")":
            group = stack.pop()
            for symbol, count in group.items():
                stack[-1][symbol] = stack[-1].get(symbol, 0) + count * multiplier
        elif token.isdigit():
            raise ValueError(f"a number in the wrong place in {formula!r}")
        else:
            if token not in _ELEMENTS:
                raise ValueError(f"unknown element {token!r}")
            stack[-1][token] = stack[-1].get(token, 0) + multiplier
    if len(stack) != 1:
        raise ValueError("unbalanced parentheses")
    return stack[0]


@tool(permission="read")
def molar_mass(formula: str) -> dict[str, Any]:
    """Molar mass (molecular weight) of a chemical formula such as H2O, C6H12O6 or Ca(OH)2, in
    g/mol, with each element's share. Use it for chemistry homework and moles-to-grams work. For
    a single element use element_lookup.
    中文：摩尔质量、分子量、相对分子质量、化学式。

    Args:
        formula: The formula, case-sensitive, parentheses allowed.
    """
    counts = _formula_counts(formula.strip())
    mass = sum(_ELEMENTS[s][3] * n for s, n in counts.items())
    return {
        "grams_per_mol": round(mass, 3),
        "composition_percent": {
            s: round(_ELEMENTS[s][3] * n / mass * 100, 2) for s, n in counts.items()
        },
    }


@tool(permission="read")
def ideal_gas_law(
    solve_for: Literal["pressure", "volume", "moles", "temperature"],
    pressure_kpa: float = 0,
    volume_litres: float = 0,
    moles: float = 0,
    temperature_k: float = 0,
) -> dict[str, Any]:
    """Solve the ideal gas law PV = nRT for the missing one of pressure (kPa), volume (L), amount
    of gas (mol) or temperature (K). Use it for gas pressure, volume and temperature problems in
    chemistry and physics.
    中文：理想气体状态方程、PV=nRT、气体压强体积。

    Args:
        solve_for: Which quantity to compute.
        pressure_kpa: Pressure in kPa.
        volume_litres: Volume in litres.
        moles: Amount of gas in mol.
        temperature_k: Temperature in kelvin.
    """
    r = GAS_CONSTANT  # kPa·L/(mol·K) has the same value as J/(mol·K)
    result: Callable[[], float] = {
        "pressure": lambda: moles * r * temperature_k / volume_litres,
        "volume": lambda: moles * r * temperature_k / pressure_kpa,
        "moles": lambda: pressure_kpa * volume_litres / (r * temperature_k),
        "temperature": lambda: pressure_kpa * volume_litres / (moles * r),
    }[solve_for]
    try:
        value = result()
    except ZeroDivisionError:
        raise ValueError("give non-zero values for the other three quantities") from None
    units = {"pressure": "kPa", "volume": "L", "moles": "mol", "temperature": "K"}
    return {solve_for: round(value, 4), "unit": units[solve_for]}


@tool(permission="read")
def ohms_law(voltage: float = 0, current: float = 0, resistance: float = 0) -> dict[str, Any]:
    """Ohm's law: from two of voltage (V), current (A) and resistance (Ω), the third, plus the
    power in watts. Use it for circuits, LEDs and 'what resistor do I need'. For resistors in
    series or parallel use combine_resistors.
    中文：欧姆定律、电压电流电阻、功率、电路计算。

    Args:
        voltage: Volts, or 0 if unknown.
        current: Amperes, or 0 if unknown.
        resistance: Ohms, or 0 if unknown.
    """
    if voltage and current:
        resistance = voltage / current
    elif voltage and resistance:
        current = voltage / resistance
    elif current and resistance:
        voltage = current * resistance
    else:
        raise ValueError("give two of voltage, current and resistance")
    return {
        "voltage": round(voltage, 6),
        "current": round(current, 6),
        "resistance": round(resistance, 6),
        "power_watts": round(voltage * current, 6),
    }


@tool(permission="read")
def combine_resistors(
    ohms: list[float], arrangement: Literal["series", "parallel"]
) -> dict[str, Any]:
    """Total resistance of resistors wired in series or in parallel (the same formulas give
    capacitors the other way round). Use it for circuit design and physics homework. For a
    single V-I-R calculation use ohms_law.
    中文：电阻串联、电阻并联、等效电阻、总电阻。

    Args:
        ohms: Each resistor's value in ohms.
        arrangement: series or parallel.
    """
    if not ohms or any(r <= 0 for r in ohms):
        raise ValueError("give positive resistances")
    total = sum(ohms) if arrangement == "series" else 1 / sum(1 / r for r in ohms)
    return {"total_ohms": round(total, 4)}


@tool(permission="read")
def resistor_color_code(bands: list[str]) -> dict[str, Any]:
    """Read a 4- or 5-band resistor's colour bands as a resistance value and tolerance. Use it
    for identifying resistors in electronics kits.
    中文：色环电阻、电阻颜色读数、电阻阻值。

    Args:
        bands: The colours in order, e.g. ["brown", "black", "red", "gold"].
    """
    colours = [b.strip().lower().replace("gray", "grey") for b in bands]
    if len(colours) not in (4, 5):
        raise ValueError("give 4 or 5 bands")
    *digits, multiplier, tolerance = colours
    try:
        value = int("".join(str(_BANDS.index(d)) for d in digits))
        factor = {"gold": 0.1, "silver": 0.01}.get(multiplier) or 10 ** _BANDS.index(multiplier)
    except ValueError:
        raise ValueError(f"colours are {', '.join(_BANDS)}, gold, silver") from None
    ohms = value * factor
    return {"ohms": round(ohms, 3), "tolerance_percent": _TOLERANCE.get(tolerance)}


@tool(permission="read")
def projectile_motion(speed_ms: float, angle_degrees: float, height_m: float = 0) -> dict[str, Any]:
    """Range, peak height and flight time of a thrown, kicked or launched object from its speed,
    angle and starting height, ignoring air resistance. Use it for physics problems about balls,
    cannons and jumps. For a straight drop use free_fall.
    中文：抛体运动、射程、斜抛、最大高度。

    Args:
        speed_ms: The launch speed in m/s.
        angle_degrees: The launch angle above horizontal.
        height_m: The launch height above the ground in metres.
    """
    a = math.radians(angle_degrees)
    vx, vy = speed_ms * math.cos(a), speed_ms * math.sin(a)
    time = (vy + math.sqrt(vy * vy + 2 * G * height_m)) / G
    return {
        "range_m": round(vx * time, 2),
        "max_height_m": round(height_m + vy * vy / (2 * G), 2),
        "flight_time_s": round(time, 2),
    }


@tool(permission="read")
def free_fall(height_m: float) -> dict[str, Any]:
    """Time for an object dropped from a height to hit the ground, and its impact speed, ignoring
    air resistance. Use it for 'how long does it take to fall from 100 m'. For objects thrown at
    an angle use projectile_motion.
    中文：自由落体、下落时间、落地速度、重力加速度。

    Args:
        height_m: The drop height in metres.
    """
    t = math.sqrt(2 * height_m / G)
    return {
        "seconds": round(t, 3),
        "impact_speed_ms": round(G * t, 2),
        "impact_speed_kmh": round(G * t * 3.6, 1),
    }


@tool(permission="read")
def wavelength_frequency(wavelength_nm: float = 0, frequency_hz: float = 0) -> dict[str, Any]:
    """Light and electromagnetic waves: convert wavelength (nm) to frequency (Hz) or back, with
    the photon energy in eV. Use it for optics, lasers and spectrum questions.
    中文：波长频率换算、光子能量、电磁波、光的颜色。

    Args:
        wavelength_nm: Wavelength in nanometres (or 0 to give the frequency).
        frequency_hz: Frequency in hertz (used when wavelength_nm is 0).
    """
    if wavelength_nm:
        frequency_hz = LIGHT_SPEED / (wavelength_nm * 1e-9)
    elif frequency_hz:
        wavelength_nm = LIGHT_SPEED / frequency_hz * 1e9
    else:
        raise ValueError("give a wavelength or a frequency")
    return {
        "wavelength_nm": round(wavelength_nm, 4),
        "frequency_hz": float(f"{frequency_hz:.6g}"),
        "photon_energy_ev": round(PLANCK * frequency_hz / ELECTRON_VOLT, 4),
    }


@tool(permission="read")
def radioactive_decay(initial_amount: float, half_life: float, elapsed: float) -> dict[str, Any]:
    """How much of a radioactive substance (or any exponentially decaying quantity) remains after
    some time, from its half-life. Use it for carbon dating style, isotope and drug half-life
    questions.
    中文：半衰期、放射性衰变、剩余量、衰减。

    Args:
        initial_amount: The starting amount (any unit).
        half_life: The half-life (same time unit as elapsed).
        elapsed: The time passed.
    """
    remaining = initial_amount * 0.5 ** (elapsed / half_life)
    return {
        "remaining": float(f"{remaining:.6g}"),
        "fraction_left": round(remaining / initial_amount, 6),
    }


@tool(permission="read")
def ph_calculator(hydrogen_ion_molar: float = 0, ph: float | None = None) -> dict[str, Any]:
    """pH from a hydrogen ion concentration, or the concentration from a pH, and whether the
    solution is acidic, neutral or basic (alkaline). Use it for chemistry and water-quality
    questions. For diluting solutions use solution_dilution.
    中文：pH值、酸碱性、氢离子浓度、酸性碱性。

    Args:
        hydrogen_ion_molar: [H+] in mol/L (0 to give pH instead).
        ph: The pH (used when hydrogen_ion_molar is 0 or not given).
    """
    if hydrogen_ion_molar > 0:
        ph = -math.log10(hydrogen_ion_molar)
    elif ph is not None:
        hydrogen_ion_molar = 10**-ph
    else:
        raise ValueError("give a concentration or a pH")
    nature = "acidic" if ph < 7 else "basic" if ph > 7 else "neutral"
    return {
        "ph": round(ph, 3),
        "hydrogen_ion_molar": float(f"{hydrogen_ion_molar:.4g}"),
        "poh": round(14 - ph, 3),
        "nature": nature,
    }


@tool(permission="read")
def solution_dilution(
    stock_concentration: float, final_concentration: float, final_volume: float
) -> dict[str, Any]:
    """Dilution by C1V1 = C2V2: how much stock solution and how much water or diluent to mix for
    a target concentration and volume. Use it in labs, cleaning products and gardening mixes.
    中文：溶液稀释、配溶液、浓度换算、稀释比例。

    Args:
        stock_concentration: The concentration of the stock (any unit).
        final_concentration: The concentration wanted (same unit).
        final_volume: The volume wanted (any unit).
    """
    if final_concentration > stock_concentration:
        raise ValueError("dilution cannot make a solution stronger than its stock")
    stock = final_concentration * final_volume / stock_concentration
    return {"stock_volume": round(stock, 4), "diluent_volume": round(final_volume - stock, 4)}


@tool(permission="read")
def weight_on_planet(mass_kg: float, body: str) -> dict[str, Any]:
    """What a person or object would weigh on another planet, the Moon or Pluto, from its mass
    and that body's surface gravity. Use it for space and gravity questions.
    中文：其他星球上的体重、月球重量、行星重力、火星。

    Args:
        mass_kg: The mass in kilograms.
        body: mercury, venus, earth, moon, mars, jupiter, saturn, uranus, neptune, pluto, or 火星...
    """
    key = _PLANETS_ZH.get(body.strip(), body.strip().lower())
    if key not in _GRAVITY:
        raise ValueError(f"unknown body {body!r}")
    g = _GRAVITY[key]
    return {
        "newtons": round(mass_kg * g, 1),
        "earth_kg_equivalent": round(mass_kg * g / 9.807, 1),
        "gravity_ms2": g,
    }


@tool(permission="read")
def speed_of_sound(air_temperature_c: float = 20) -> dict[str, Any]:
    """Speed of sound in air at a temperature, and how far away lightning is per second between
    flash and thunder. Use it for thunderstorm distance and acoustics questions.
    中文：声速、音速、打雷距离、闪电多远。

    Args:
        air_temperature_c: The air temperature in °C.
    """
    speed = 331.3 * math.sqrt(1 + air_temperature_c / 273.15)
    return {"metres_per_second": round(speed, 1), "km_per_second_of_delay": round(speed / 1000, 3)}


@tool(permission="read")
def moon_phase(day: str) -> dict[str, Any]:
    """Phase of the Moon on a date: age in days, illuminated fraction and its name (new, full,
    crescent...). Use it for 'is there a full moon tonight' or stargazing and photography
    planning.
    中文：月相、满月、新月、月亮圆缺。

    Args:
        day: The date, YYYY-MM-DD.
    """
    synodic = 29.530588853
    known_new_moon = date(2000, 1, 6)  # 18:14 UTC
    age = ((date.fromisoformat(day) - known_new_moon).days - 0.76) % synodic
    illumination = (1 - math.cos(2 * math.pi * age / synodic)) / 2
    names = [
        "new moon",
        "waxing crescent",
        "first quarter",
        "waxing gibbous",
        "full moon",
        "waning gibbous",
        "last quarter",
        "waning crescent",
    ]
    return {
        "age_days": round(age, 1),
        "illumination_percent": round(illumination * 100),
        "phase": names[round(age / synodic * 8) % 8],
    }

"""Health and fitness estimates from standard formulas. Estimates only, not medical advice."""

from __future__ import annotations

import math
from datetime import date, timedelta
from typing import Any, Literal

from toolcall_cli import tool

Sex = Literal["male", "female"]

_ACTIVITY_FACTORS: dict[str, float] = {
    "sedentary": 1.2,
    "light": 1.375,
    "moderate": 1.55,
    "active": 1.725,
    "very_active": 1.9,
}

# Compendium of Physical Activities, typical MET values.
_METS: dict[str, float] = {
    "walking": 3.5,
    "brisk walking": 4.3,
    "running": 9.8,
    "cycling": 7.5,
    "swimming": 6.0,
    "yoga": 2.5,
    "weight lifting": 5.0,
    "jump rope": 12.3,
    "hiking": 6.0,
    "dancing": 5.0,
    "basketball": 6.5,
    "badminton": 5.5,
    "table tennis": 4.0,
    "housework": 3.3,
}


def _bmi_category(bmi: float) -> str:
    if bmi < 18.5:
        return "underweight"
    if bmi < 25:
        return "normal"
    if bmi < 30:
        return "overweight"
    return "obese"


@tool(permission="read")
def body_mass_index(weight_kg: float, height_cm: float) -> dict[str, Any]:
    """Body mass index (BMI) from weight in kg and height in cm, with the WHO category
    (underweight, normal, overweight, obese). Use it for 'am I overweight' or 'what is my BMI'.
    For a target weight use ideal_body_weight; for body fat use body_fat_percentage.
    中文：BMI、体重指数、胖不胖、超重肥胖、偏瘦。

    Args:
        weight_kg: Body weight in kilograms.
        height_cm: Height in centimetres.
    """
    if height_cm <= 0 or weight_kg <= 0:
        raise ValueError("weight and height must be positive")
    bmi = weight_kg / (height_cm / 100) ** 2
    return {"bmi": round(bmi, 1), "category": _bmi_category(bmi)}


def _bmr(sex: Sex, weight_kg: float, height_cm: float, age: int) -> float:
    base = 10 * weight_kg + 6.25 * height_cm - 5 * age
    return base + 5 if sex == "male" else base - 161


@tool(permission="read")
def basal_metabolic_rate(sex: Sex, weight_kg: float, height_cm: float, age: int) -> dict[str, Any]:
    """Basal metabolic rate (BMR): calories the body burns a day at complete rest, by the
    Mifflin-St Jeor equation from sex, weight, height and age. Use it for resting metabolism
    questions. For calories to eat including activity use daily_calorie_needs.
    中文：基础代谢率、BMR、静息代谢、每天消耗多少热量。

    Args:
        sex: male or female.
        weight_kg: Body weight in kilograms.
        height_cm: Height in centimetres.
        age: Age in years.
    """
    return {"bmr_kcal_per_day": round(_bmr(sex, weight_kg, height_cm, age))}


@tool(permission="read")
def daily_calorie_needs(
    sex: Sex,
    weight_kg: float,
    height_cm: float,
    age: int,
    activity: Literal["sedentary", "light", "moderate", "active", "very_active"] = "moderate",
) -> dict[str, Any]:
    """Total daily energy expenditure (TDEE): the calories a day to maintain weight at an
    activity level, and targets to lose or gain weight. Use it for diet planning, 'how many
    calories should I eat'. For resting burn only use basal_metabolic_rate; for one workout use
    calories_burned.
    中文：每日热量需求、卡路里摄入、减肥吃多少、增肌热量。

    Args:
        sex: male or female.
        weight_kg: Body weight in kilograms.
        height_cm: Height in centimetres.
        age: Age in years.
        activity: How active the person is, from sedentary to very_active.
    """
    tdee = _bmr(sex, weight_kg, height_cm, age) * _ACTIVITY_FACTORS[activity]
    return {
        "maintain_kcal": round(tdee),
        "lose_half_kg_per_week_kcal": round(tdee - 500),
        "gain_half_kg_per_week_kcal": round(tdee + 500),
    }


@tool(permission="read")
def ideal_body_weight(sex: Sex, height_cm: float) -> dict[str, Any]:
    """Ideal or standard body weight for a height by the Devine formula, and the weight range
    that gives a healthy BMI. Use it for 'how much should I weigh'. For the BMI of a given
    weight use body_mass_index.
    中文：标准体重、理想体重、身高对应体重、健康体重。

    Args:
        sex: male or female.
        height_cm: Height in centimetres.
    """
    inches_over_five_feet = max(height_cm / 2.54 - 60, 0)
    devine = (50.0 if sex == "male" else 45.5) + 2.3 * inches_over_five_feet
    metres = height_cm / 100
    return {
        "devine_kg": round(devine, 1),
        "healthy_range_kg": [round(18.5 * metres**2, 1), round(24.9 * metres**2, 1)],
    }


@tool(permission="read")
def body_fat_percentage(
    sex: Sex, height_cm: float, waist_cm: float, neck_cm: float, hip_cm: float = 0.0
) -> dict[str, Any]:
    """Body fat percentage estimated from tape measurements of waist, neck and hip (US Navy
    method). Use it when someone has measurements but no scale that reads body fat. For
    weight-to-height checks use body_mass_index.
    中文：体脂率、体脂肪、腰围颈围、脂肪含量。

    Args:
        sex: male or female.
        height_cm: Height in centimetres.
        waist_cm: Waist circumference at the navel, in centimetres.
        neck_cm: Neck circumference, in centimetres.
        hip_cm: Hip circumference in centimetres (needed for women).
    """
    if sex == "male":
        if waist_cm <= neck_cm:
            raise ValueError("the waist must be larger than the neck")
        fat = (
            495
            / (1.0324 - 0.19077 * math.log10(waist_cm - neck_cm) + 0.15456 * math.log10(height_cm))
            - 450
        )
    else:
        if hip_cm <= 0:
            raise ValueError("the Navy method needs hip_cm for women")
        fat = (
            495
            / (
                1.29579
                - 0.35004 * math.log10(waist_cm + hip_cm - neck_cm)
                + 0.22100 * math.log10(height_cm)
            )
            - 450
        )
    return {"body_fat_percent": round(fat, 1)}


@tool(permission="read")
def heart_rate_training_zones(age: int, resting_heart_rate: int = 0) -> dict[str, Any]:
    """Maximum heart rate and the five heart-rate training zones for an age, by the Karvonen
    method when a resting heart rate is given. Use it for running, cycling or cardio training
    targets and fat-burning zones. It does not estimate calories; use calories_burned.
    中文：心率区间、最大心率、燃脂心率、运动心率。

    Args:
        age: Age in years.
        resting_heart_rate: Resting pulse in beats per minute; 0 to use plain percentages.
    """
    maximum = 220 - age
    reserve = maximum - resting_heart_rate
    bounds = [(0.5, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.0)]
    names = ["recovery", "endurance", "aerobic", "threshold", "maximum"]
    zones = {
        name: [
            round(resting_heart_rate + low * reserve),
            round(resting_heart_rate + high * reserve),
        ]
        for name, (low, high) in zip(names, bounds, strict=True)
    }
    return {"max_heart_rate": maximum, "zones_bpm": zones}


@tool(permission="read")
def daily_water_intake(weight_kg: float, exercise_minutes: int = 0) -> dict[str, Any]:
    """Recommended daily water intake from body weight (35 ml per kg) plus extra for exercise.
    Use it for 'how much water should I drink a day'. It is a rule of thumb, not medical advice.
    中文：每天喝多少水、饮水量、补水、喝水。

    Args:
        weight_kg: Body weight in kilograms.
        exercise_minutes: Minutes of exercise that day.
    """
    millilitres = weight_kg * 35 + exercise_minutes / 30 * 350
    return {"millilitres": round(millilitres), "glasses_250ml": round(millilitres / 250, 1)}


@tool(permission="read")
def pregnancy_due_date(last_period: str, cycle_days: int = 28) -> dict[str, Any]:
    """Estimated pregnancy due date from the first day of the last menstrual period (Naegele's
    rule, adjusted for cycle length), with the estimated conception date. Use it for 'when is my
    baby due' and conception-date questions.
    中文：预产期、怀孕几周、孕周、末次月经。

    Args:
        last_period: The first day of the last period, YYYY-MM-DD.
        cycle_days: The usual cycle length in days.
    """
    start = date.fromisoformat(last_period)
    due = start + timedelta(days=280 + cycle_days - 28)
    conception = start + timedelta(days=cycle_days - 14)
    return {"due_date": due.isoformat(), "estimated_conception": conception.isoformat()}


@tool(permission="read")
def blood_alcohol_estimate(
    sex: Sex, weight_kg: float, standard_drinks: float, hours_since_first_drink: float
) -> dict[str, Any]:
    """Rough blood alcohol concentration (BAC) by the Widmark formula from sex, weight, standard
    drinks and hours since drinking started. Use it for 'am I still over the limit' style
    questions; it is an estimate only and never says it is safe to drive.
    中文：血液酒精浓度、酒驾、醉驾、喝酒多久能开车。

    Args:
        sex: male or female.
        weight_kg: Body weight in kilograms.
        standard_drinks: How many standard drinks (10 g of alcohol each).
        hours_since_first_drink: Hours since drinking began.
    """
    ratio = 0.68 if sex == "male" else 0.55
    grams = standard_drinks * 10
    bac = max(grams / (weight_kg * 1000 * ratio) * 100 - 0.015 * hours_since_first_drink, 0.0)
    return {
        "bac_percent": round(bac, 3),
        "hours_until_zero": round(bac / 0.015, 1),
        "note": "an estimate; never use it to decide whether to drive",
    }


@tool(permission="read")
def calories_burned(activity: str, weight_kg: float, minutes: float) -> dict[str, Any]:
    """Calories burned by an exercise or activity (running, walking, cycling, swimming, yoga...)
    for a body weight and duration, from MET values. Use it for 'how many calories does an hour
    of running burn'. For daily needs use daily_calorie_needs.
    中文：运动消耗热量、卡路里消耗、跑步消耗、健身燃脂。

    Args:
        activity: The activity, e.g. running, cycling, swimming, yoga, hiking, badminton.
        weight_kg: Body weight in kilograms.
        minutes: How long, in minutes.
    """
    met = _METS.get(activity.strip().lower())
    if met is None:
        raise ValueError(f"unknown activity {activity!r}; known: {', '.join(_METS)}")
    return {"kcal": round(met * 3.5 * weight_kg / 200 * minutes), "met": met}


@tool(permission="read")
def waist_to_height_ratio(waist_cm: float, height_cm: float) -> dict[str, Any]:
    """Waist-to-height ratio, a simple marker of belly fat and central obesity risk (healthy
    below 0.5). Use it when waist size is given with height. For BMI use body_mass_index.
    中文：腰高比、腹型肥胖、腰围、肚子大。

    Args:
        waist_cm: Waist circumference in centimetres.
        height_cm: Height in centimetres.
    """
    ratio = waist_cm / height_cm
    return {"ratio": round(ratio, 3), "increased_risk": ratio >= 0.5}


@tool(permission="read")
def body_surface_area(weight_kg: float, height_cm: float) -> dict[str, Any]:
    """Body surface area (BSA) in square metres from weight and height by the Mosteller formula,
    as used for chemotherapy and drug dosing. Use it for BSA questions, not for weight status.
    中文：体表面积、BSA、药物剂量计算。

    Args:
        weight_kg: Body weight in kilograms.
        height_cm: Height in centimetres.
    """
    return {"bsa_m2": round(math.sqrt(weight_kg * height_cm / 3600), 3)}


@tool(permission="read")
def sleep_cycle_wake_times(bedtime: str, minutes_to_fall_asleep: int = 15) -> dict[str, Any]:
    """Good times to wake up (or alarm times) after going to bed, at the end of 90-minute sleep
    cycles, counting time to fall asleep. Use it for 'if I sleep at 11, when should I get up' so
    as to wake feeling rested.
    中文：睡眠周期、几点起床、闹钟时间、睡眠计算。

    Args:
        bedtime: When you go to bed, HH:MM (24-hour).
        minutes_to_fall_asleep: How long it usually takes to fall asleep.
    """
    hours, minutes = (int(part) for part in bedtime.split(":"))
    asleep = hours * 60 + minutes + minutes_to_fall_asleep
    times = []
    for cycles in range(4, 7):
        wake = (asleep + cycles * 90) % (24 * 60)
        times.append({"cycles": cycles, "wake_at": f"{wake // 60:02d}:{wake % 60:02d}"})
    return {"wake_times": times}

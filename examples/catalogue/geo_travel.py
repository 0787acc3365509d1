"""Geography and travel: distances, bearings, coordinates, capitals, dialling codes, trip costs."""

from __future__ import annotations

import math
import re
from typing import Any

from toolcall_cli import tool

EARTH_RADIUS_KM = 6371.0088

# name: (latitude, longitude, Chinese name)
_CITIES: dict[str, tuple[float, float, str]] = {
    "beijing": (39.9042, 116.4074, "北京"), "shanghai": (31.2304, 121.4737, "上海"),
    "guangzhou": (23.1291, 113.2644, "广州"), "shenzhen": (22.5431, 114.0579, "深圳"),
    "chengdu": (30.5728, 104.0668, "成都"), "xi'an": (34.3416, 108.9398, "西安"),
    "hong kong": (22.3193, 114.1694, "香港"), "taipei": (25.0330, 121.5654, "台北"),
    "tokyo": (35.6762, 139.6503, "东京"), "seoul": (37.5665, 126.9780, "首尔"),
    "singapore": (1.3521, 103.8198, "新加坡"), "bangkok": (13.7563, 100.5018, "曼谷"),
    "new delhi": (28.6139, 77.2090, "新德里"), "dubai": (25.2048, 55.2708, "迪拜"),
    "moscow": (55.7558, 37.6173, "莫斯科"), "london": (51.5074, -0.1278, "伦敦"),
    "paris": (48.8566, 2.3522, "巴黎"), "berlin": (52.5200, 13.4050, "柏林"),
    "rome": (41.9028, 12.4964, "罗马"), "madrid": (40.4168, -3.7038, "马德里"),
    "new york": (40.7128, -74.0060, "纽约"), "los angeles": (34.0522, -118.2437, "洛杉矶"),
    "san francisco": (37.7749, -122.4194, "旧金山"), "chicago": (41.8781, -87.6298, "芝加哥"),
    "toronto": (43.6532, -79.3832, "多伦多"), "vancouver": (49.2827, -123.1207, "温哥华"),
    "mexico city": (19.4326, -99.1332, "墨西哥城"), "sao paulo": (-23.5505, -46.6333, "圣保罗"),
    "sydney": (-33.8688, 151.2093, "悉尼"), "melbourne": (-37.8136, 144.9631, "墨尔本"),
    "cairo": (30.0444, 31.2357, "开罗"), "cape town": (-33.9249, 18.4241, "开普敦"),
}  # fmt: skip
_CITY_BY_ZH = {zh: name for name, (_, _, zh) in _CITIES.items()}

# country: (capital, capital in Chinese, calling code, currency, drives on)
_COUNTRIES: dict[str, tuple[str, str, str, str, str]] = {
    "china": ("Beijing", "北京", "+86", "CNY", "right"),
    "japan": ("Tokyo", "东京", "+81", "JPY", "left"),
    "south korea": ("Seoul", "首尔", "+82", "KRW", "right"),
    "india": ("New Delhi", "新德里", "+91", "INR", "left"),
    "thailand": ("Bangkok", "曼谷", "+66", "THB", "left"),
    "vietnam": ("Hanoi", "河内", "+84", "VND", "right"),
    "indonesia": ("Jakarta", "雅加达", "+62", "IDR", "left"),
    "malaysia": ("Kuala Lumpur", "吉隆坡", "+60", "MYR", "left"),
    "singapore": ("Singapore", "新加坡", "+65", "SGD", "left"),
    "philippines": ("Manila", "马尼拉", "+63", "PHP", "right"),
    "australia": ("Canberra", "堪培拉", "+61", "AUD", "left"),
    "new zealand": ("Wellington", "惠灵顿", "+64", "NZD", "left"),
    "united kingdom": ("London", "伦敦", "+44", "GBP", "left"),
    "ireland": ("Dublin", "都柏林", "+353", "EUR", "left"),
    "france": ("Paris", "巴黎", "+33", "EUR", "right"),
    "germany": ("Berlin", "柏林", "+49", "EUR", "right"),
    "italy": ("Rome", "罗马", "+39", "EUR", "right"),
    "spain": ("Madrid", "马德里", "+34", "EUR", "right"),
    "netherlands": ("Amsterdam", "阿姆斯特丹", "+31", "EUR", "right"),
    "switzerland": ("Bern", "伯尔尼", "+41", "CHF", "right"),
    "sweden": ("Stockholm", "斯德哥尔摩", "+46", "SEK", "right"),
    "norway": ("Oslo", "奥斯陆", "+47", "NOK", "right"),
    "russia": ("Moscow", "莫斯科", "+7", "RUB", "right"),
    "turkey": ("Ankara", "安卡拉", "+90", "TRY", "right"),
    "egypt": ("Cairo", "开罗", "+20", "EGP", "right"),
    "south africa": ("Pretoria", "比勒陀利亚", "+27", "ZAR", "left"),
    "kenya": ("Nairobi", "内罗毕", "+254", "KES", "left"),
    "united states": ("Washington, D.C.", "华盛顿", "+1", "USD", "right"),
    "canada": ("Ottawa", "渥太华", "+1", "CAD", "right"),
    "mexico": ("Mexico City", "墨西哥城", "+52", "MXN", "right"),
    "brazil": ("Brasília", "巴西利亚", "+55", "BRL", "right"),
    "argentina": ("Buenos Aires", "布宜诺斯艾利斯", "+54", "ARS", "right"),
    "united arab emirates": ("Abu Dhabi", "阿布扎比", "+971", "AED", "right"),
    "saudi arabia": ("Riyadh", "利雅得", "+966", "SAR", "right"),
}
_COUNTRY_ALIASES = {
    "中国": "china", "日本": "japan", "韩国": "south korea", "印度": "india", "泰国": "thailand",
    "越南": "vietnam", "印度尼西亚": "indonesia", "印尼": "indonesia", "马来西亚": "malaysia",
    "新加坡": "singapore", "菲律宾": "philippines", "澳大利亚": "australia", "澳洲": "australia",
    "新西兰": "new zealand", "英国": "united kingdom", "uk": "united kingdom",
    "爱尔兰": "ireland", "法国": "france", "德国": "germany", "意大利": "italy",
    "西班牙": "spain", "荷兰": "netherlands", "瑞士": "switzerland", "瑞典": "sweden",
    "挪威": "norway", "俄罗斯": "russia", "土耳其": "turkey", "埃及": "egypt",
    "南非": "south africa", "肯尼亚": "kenya", "美国": "united states", "usa": "united states",
    "us": "united states", "加拿大": "canada", "墨西哥": "mexico", "巴西": "brazil",
    "阿根廷": "argentina", "阿联酋": "united arab emirates", "uae": "united arab emirates",
    "沙特": "saudi arabia", "沙特阿拉伯": "saudi arabia",
}  # fmt: skip


def _country(name: str) -> tuple[str, tuple[str, str, str, str, str]]:
    key = name.strip().lower()
    key = _COUNTRY_ALIASES.get(key, key)
    if key not in _COUNTRIES:
        raise ValueError(f"{name!r} is not in the table of {len(_COUNTRIES)} countries")
    return key, _COUNTRIES[key]


def _city(name: str) -> tuple[float, float]:
    key = _CITY_BY_ZH.get(name.strip(), name.strip().lower())
    if key not in _CITIES:
        raise ValueError(f"unknown city {name!r}; known: {', '.join(_CITIES)}")
    lat, lon, _ = _CITIES[key]
    return lat, lon


def _haversine(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    p1, p2 = math.radians(lat1), math.radians(lat2)
    dp, dl = p2 - p1, math.radians(lon2 - lon1)
    a = math.sin(dp / 2) ** 2 + math.cos(p1) * math.cos(p2) * math.sin(dl / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(a))


@tool(permission="read")
def great_circle_distance(lat1: float, lon1: float, lat2: float, lon2: float) -> dict[str, Any]:
    """Distance over the Earth's surface between two latitude/longitude points (haversine), in km
    and miles. Use it when coordinates are given. For named cities use distance_between_cities.
    中文：经纬度距离、两点距离、坐标距离、球面距离。

    Args:
        lat1: Latitude of the first point in decimal degrees.
        lon1: Longitude of the first point.
        lat2: Latitude of the second point.
        lon2: Longitude of the second point.
    """
    km = _haversine(lat1, lon1, lat2, lon2)
    return {
        "km": round(km, 1),
        "miles": round(km / 1.609344, 1),
        "nautical_miles": round(km / 1.852, 1),
    }


@tool(permission="read")
def distance_between_cities(from_city: str, to_city: str) -> dict[str, Any]:
    """Straight-line (as the crow flies, flight) distance between two major world cities by name,
    in Chinese or English. Use it for 'how far is Beijing from Shanghai'. For flight duration
    use flight_time_estimate; for driving fuel use road_trip_fuel_cost.
    中文：城市距离、两地相距多远、直线距离、多少公里。

    Args:
        from_city: e.g. Beijing, 上海, London.
        to_city: e.g. Tokyo, 纽约, Sydney.
    """
    km = _haversine(*_city(from_city), *_city(to_city))
    return {"km": round(km), "miles": round(km / 1.609344)}


@tool(permission="read")
def flight_time_estimate(from_city: str, to_city: str, cruise_kmh: float = 850) -> dict[str, Any]:
    """Rough non-stop flight duration between two cities: distance at cruise speed plus 30
    minutes for take-off and landing. Use it for 'how long is the flight from London to Tokyo'.
    For the distance use distance_between_cities.
    中文：飞行时间、坐飞机要多久、航班时长。

    Args:
        from_city: Departure city, e.g. Shanghai.
        to_city: Arrival city, e.g. Paris.
        cruise_kmh: Average cruising speed in km/h.
    """
    km = _haversine(*_city(from_city), *_city(to_city))
    minutes = round(km / cruise_kmh * 60 + 30)
    return {"km": round(km), "hours": minutes // 60, "minutes": minutes % 60}


@tool(permission="read")
def initial_bearing(lat1: float, lon1: float, lat2: float, lon2: float) -> dict[str, Any]:
    """Compass heading (initial bearing) to set off on from one point to reach another along a
    great circle, in degrees and a compass point. Use it for navigation and direction questions.
    中文：方位角、航向、方向、朝哪个方向。

    Args:
        lat1: Latitude of the start in decimal degrees.
        lon1: Longitude of the start.
        lat2: Latitude of the destination.
        lon2: Longitude of the destination.
    """
    p1, p2, dl = math.radians(lat1), math.radians(lat2), math.radians(lon2 - lon1)
    x = math.sin(dl) * math.cos(p2)
    y = math.cos(p1) * math.sin(p2) - math.sin(p1) * math.cos(p2) * math.cos(dl)
    bearing = (math.degrees(math.atan2(x, y)) + 360) % 360
    points = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"]
    return {"degrees": round(bearing, 1), "compass": points[round(bearing / 45) % 8]}


@tool(permission="read")
def geographic_midpoint(lat1: float, lon1: float, lat2: float, lon2: float) -> dict[str, Any]:
    """The point halfway between two coordinates along the great circle, a fair meeting point.
    Use it for 'where should we meet halfway'.
    中文：两地中点、中间点、见面地点。

    Args:
        lat1: Latitude of the first point.
        lon1: Longitude of the first point.
        lat2: Latitude of the second point.
        lon2: Longitude of the second point.
    """
    p1, p2 = math.radians(lat1), math.radians(lat2)
    l1, dl = math.radians(lon1), math.radians(lon2 - lon1)
    bx, by = math.cos(p2) * math.cos(dl), math.cos(p2) * math.sin(dl)
    lat = math.atan2(math.sin(p1) + math.sin(p2), math.hypot(math.cos(p1) + bx, by))
    lon = l1 + math.atan2(by, math.cos(p1) + bx)
    return {
        "lat": round(math.degrees(lat), 5),
        "lon": round((math.degrees(lon) + 540) % 360 - 180, 5),
    }


@tool(permission="read")
def decimal_to_dms(latitude: float, longitude: float) -> dict[str, Any]:
    """Write decimal-degree coordinates as degrees, minutes and seconds (39°54'15"N). Use it for
    maps, GPS and surveying formats. For the reverse use dms_to_decimal.
    中文：经纬度转度分秒、坐标格式转换、GPS坐标。

    Args:
        latitude: Latitude in decimal degrees (negative is south).
        longitude: Longitude in decimal degrees (negative is west).
    """

    def dms(value: float, positive: str, negative: str) -> str:
        total = round(abs(value) * 3600, 1)
        degrees, rest = divmod(total, 3600)
        minutes, seconds = divmod(rest, 60)
        return f"{int(degrees)}°{int(minutes)}'{seconds:g}\"{positive if value >= 0 else negative}"

    return {"latitude": dms(latitude, "N", "S"), "longitude": dms(longitude, "E", "W")}


_DMS = re.compile(r"(\d+(?:\.\d+)?)\D+(\d+(?:\.\d+)?)?\D*(\d+(?:\.\d+)?)?\D*?([NSEW])?\s*$", re.I)


@tool(permission="read")
def dms_to_decimal(coordinate: str) -> dict[str, Any]:
    """Turn a degrees-minutes-seconds coordinate such as 40°26'46"N into decimal degrees. Use it
    to paste coordinates into maps or code. For the reverse use decimal_to_dms.
    中文：度分秒转十进制、经纬度换算、坐标转换。

    Args:
        coordinate: One coordinate, e.g. 40°26'46"N or 79 58 56 W.
    """
    match = _DMS.match(coordinate.strip())
    if match is None:
        raise ValueError("write degrees, minutes, seconds and N/S/E/W, e.g. 40°26'46\"N")
    degrees, minutes, seconds, hemisphere = match.groups()
    value = float(degrees) + float(minutes or 0) / 60 + float(seconds or 0) / 3600
    if hemisphere and hemisphere.upper() in "SW":
        value = -value
    return {"decimal": round(value, 6)}


@tool(permission="read")
def country_capital(country: str) -> dict[str, Any]:
    """The capital city of a country, in English and Chinese. Use it for 'what is the capital of
    Australia'.
    中文：首都、首府、国家首都是哪里。

    Args:
        country: The country in English or Chinese, e.g. Australia, 加拿大.
    """
    key, info = _country(country)
    return {"country": key.title(), "capital": info[0], "capital_zh": info[1]}


@tool(permission="read")
def country_dialing_code(country: str) -> dict[str, Any]:
    """The international telephone calling code of a country, e.g. +44 for the UK, +86 for China.
    Use it for phoning abroad. For currency and driving side use country_travel_facts.
    中文：国际区号、国家代码、打国际电话、电话区号。

    Args:
        country: The country in English or Chinese.
    """
    key, info = _country(country)
    return {"country": key.title(), "calling_code": info[2]}


@tool(permission="read")
def country_travel_facts(country: str) -> dict[str, Any]:
    """Practical facts for visiting a country: its currency and which side of the road traffic
    drives on. Use it for trip planning. For the dialing code use country_dialing_code; for the
    capital use country_capital.
    中文：出行信息、当地货币、靠左行驶、出国旅游。

    Args:
        country: The country in English or Chinese.
    """
    key, info = _country(country)
    return {"country": key.title(), "currency": info[3], "drives_on": info[4]}


@tool(permission="read")
def road_trip_fuel_cost(
    distance_km: float, litres_per_100km: float, price_per_litre: float, passengers: int = 1
) -> dict[str, Any]:
    """Fuel needed and its cost for a drive from distance, consumption and fuel price, with each
    passenger's share. Use it for 'how much petrol for a 500 km trip' and splitting gas money.
    For unit conversion of consumption use fuel_economy_convert.
    中文：自驾油费、油钱、汽油费用、油费分摊。

    Args:
        distance_km: The trip distance in kilometres.
        litres_per_100km: The car's consumption in L/100 km.
        price_per_litre: The fuel price per litre.
        passengers: How many people split the cost.
    """
    litres = distance_km * litres_per_100km / 100
    cost = litres * price_per_litre
    return {
        "litres": round(litres, 1),
        "cost": round(cost, 2),
        "per_person": round(cost / max(passengers, 1), 2),
    }


_BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"


@tool(permission="read")
def geohash_encode(latitude: float, longitude: float, precision: int = 9) -> dict[str, Any]:
    """The geohash string of a latitude/longitude at a chosen precision, used as keys for
    proximity search keys and map tiles. Use it in location-based apps and databases.
    中文：地理哈希编码、Geohash、位置编码。

    Args:
        latitude: Latitude in decimal degrees.
        longitude: Longitude in decimal degrees.
        precision: Number of characters (1-12).
    """
    lat_range, lon_range = [-90.0, 90.0], [-180.0, 180.0]
    bits, even = 0, True
    chars: list[str] = []
    count = 0
    while len(chars) < max(1, min(precision, 12)):
        rng, value = (lon_range, longitude) if even else (lat_range, latitude)
        middle = (rng[0] + rng[1]) / 2
        bits <<= 1
        if value >= middle:
            bits |= 1
            rng[0] = middle
        else:
            rng[1] = middle
        even = not even
        count += 1
        if count == 5:
            chars.append(_BASE32[bits])
            bits, count = 0, 0
    return {"geohash": "".join(chars)}


@tool(permission="read")
def jet_lag_recovery(time_zones_crossed: int, direction: str = "east") -> dict[str, Any]:
    """Days to get over jet lag after crossing time zones (about one day per zone flying east,
    less flying west). Use it for travel planning after long-haul flights.
    中文：倒时差、时差反应、时差调整、多久倒过来。

    Args:
        time_zones_crossed: How many hours of time difference.
        direction: east or west; flying east is harder.
    """
    per_day = 1.0 if direction.strip().lower() == "east" else 1.5
    return {"days": math.ceil(abs(time_zones_crossed) / per_day)}

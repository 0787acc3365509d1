"""The offline model's world knowledge: a small bilingual lexicon, a gazetteer and unit names.

Pure data plus lookups; the model reads tools and results through these words, never by tool name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


def words(text: str) -> tuple[str, ...]:
    """A word list written as one string, so the tables below stay readable."""
    return tuple(text.split())


# Concept -> the words (English, lowercase) and phrases (Chinese) that evoke it. A word may evoke
# several concepts: "temperature" is both about the weather and about units of heat.
CONCEPTS: dict[str, tuple[str, ...]] = {
    "weather": words(
        "weather forecast rain rainy raining sunny cloudy snow snowing windy storm humidity "
        "umbrella wear coat jacket shorts sleeves sweater temperature temperatures hot cold warm "
        "hotter hottest warmer warmest colder coldest cooler coolest chilly chillier "
        "天气 气象 预报 下雨 雨 晴 阴 下雪 雪 刮风 湿度 带伞 雨伞 穿 短袖 外套 衣服 毛衣 "
        "温度 气温 冷 热 暖和"
    ),
    "temperature": words("temperature temperatures celsius fahrenheit 温度 气温 摄氏 华氏"),
    "math": words(
        "calculate calculator calculation math arithmetic expression compute evaluate sum "
        "plus minus times multiply multiplied divide divided product formula equation 计算 "
        "算一下 算算 等于 加上 减去 乘以 除以 乘 除 算式 表达式 数学 次方 平方 立方 平方根 根号 "
        "百分之"
    ),
    "time": words("time clock hour timezone timezones zone 时间 几点 时区 钟点 几时"),
    "date": words("date day today tomorrow yesterday 日期 今天 明天 昨天 后天"),
    "unit": words(
        "convert conversion converter unit units celsius fahrenheit km kilometer kilometers "
        "mile miles pound pounds kilogram kilograms inch inches feet foot meter meters 换算 "
        "转换 单位 华氏 摄氏 公里 英里 公斤 千克 磅 英寸 英尺 厘米"
    ),
    "stock": words(
        "stock stocks share shares ticker equity market nasdaq nyse "
        "股票 股价 个股 股市 行情 美股 港股 代码"
    ),
    "price": words("price prices cost quote worth 价格 多少钱 价钱 报价 股价"),
    "search": words("search google web internet 搜索 搜一下 网上 上网"),
    "news": words("news headline headlines 新闻 头条 资讯"),
    "translate": words("translate translation translator 翻译 译成 英文 中文"),
    "currency": words(
        "currency currencies exchange rate usd eur cny rmb dollar dollars euro yuan 汇率 美元 "
        "欧元 人民币 日元 兑换"
    ),
    "file": words("file files directory folder path 文件 目录 文件夹"),
    "email": words("email mail send inbox 邮件 邮箱 发送"),
    "random": words("random dice roll coin flip 随机 骰子 抛硬币"),
    "distance": words("distance far route 距离 多远 路线"),
}

# Words that carry no topic: a tool named get_weather is about weather, not about "get".
NOISE_WORDS = frozenset(
    words(
        "a about also an and any are as at be by call calls can check could current did do "
        "does e eg etc fetch find for from function functions g get give given here how i "
        "if in into is it its just latest like look lookup many me much my name names now "
        "number of on only or our out please query s should show some string tell than that "
        "the then there this to today tool toolcall tools up use used using value values was "
        "we what what's whats when where which who whom why will with would you your"
    )
)

# Which of a day's measures a question means: its high or its low (else the current one). The
# English words are also those of result fields (`high_c`, `min_temp`).
EXTREMES: dict[str, tuple[str, ...]] = {
    "high": words("high highest max maximum 最高气温 最高温度 最高温 最高 高温"),
    "low": words("low lowest min minimum 最低气温 最低温度 最低温 最低 低温"),
}

# Chinese function words, stripped before looking for unknown place names.
CJK_FUNCTION_WORDS: tuple[str, ...] = words(
    "请问 请帮我 帮我 帮忙 麻烦 查一下 查询 查查 看一下 看看 告诉我 一下 现在 今天 "
    "明天 后天 昨天 今日 明日 天气 气温 温度 怎么样 如何 多少度 多少 分别 适合 可以 "
    "能不能 需要 要不要 是不是 是否 会不会 下雨 短袖 外套 衣服 穿 带伞 吗 呢 吧 啊 "
    "的 和 与 跟 及 以及 还有 是 在 有 会 都 也 我 你 他 她 它 们 这 那 哪 里 个 几 "
    "点 钟 时间 时候 几点 华氏 摄氏 度 用 换算 转换 成 为 给 把 从 到 比较 热 冷 晴 "
    "雨 雪 阴 风 怎样 呀 么 什么 情况 谢谢 多谢 感谢 你好 您好 好的 再见 那么 换成 改成"
)

CJK_RE = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def has_cjk(text: str) -> bool:
    return CJK_RE.search(text) is not None


@dataclass(frozen=True)
class Place:
    """A well-known place, in both languages, with its IANA timezone."""

    zh: str
    en: str
    timezone: str
    aliases: tuple[str, ...] = ()


# The gazetteer: each IANA zone with the places in it, `中文 English alias...` ("_" for a space).
_GAZETTEER = (
    "Asia/Shanghai: 北京 Beijing Peking, 上海 Shanghai, 广州 Guangzhou Canton, 深圳 Shenzhen, "
    "杭州 Hangzhou, 成都 Chengdu, 重庆 Chongqing, 武汉 Wuhan, 西安 Xi'an Xian, 南京 Nanjing, "
    "天津 Tianjin, 苏州 Suzhou, 哈尔滨 Harbin; Asia/Hong_Kong: 香港 Hong_Kong; "
    "Asia/Macau: 澳门 Macau Macao; Asia/Taipei: 台北 Taipei; Asia/Tokyo: 东京 Tokyo, 大阪 Osaka; "
    "Asia/Seoul: 首尔 Seoul; Asia/Singapore: 新加坡 Singapore; Asia/Bangkok: 曼谷 Bangkok; "
    "Asia/Kolkata: 孟买 Mumbai Bombay, 新德里 New_Delhi Delhi; Asia/Dubai: 迪拜 Dubai; "
    "Europe/Istanbul: 伊斯坦布尔 Istanbul; Europe/Moscow: 莫斯科 Moscow; "
    "Europe/London: 伦敦 London; Europe/Paris: 巴黎 Paris; Europe/Berlin: 柏林 Berlin; "
    "Europe/Madrid: 马德里 Madrid; Europe/Rome: 罗马 Rome; Europe/Amsterdam: 阿姆斯特丹 Amsterdam; "
    "Africa/Cairo: 开罗 Cairo; Africa/Lagos: 拉各斯 Lagos; "
    "Africa/Johannesburg: 约翰内斯堡 Johannesburg; America/New_York: 纽约 New_York NYC; "
    "America/Los_Angeles: 洛杉矶 Los_Angeles, 旧金山 San_Francisco, 西雅图 Seattle; "
    "America/Chicago: 芝加哥 Chicago; America/Toronto: 多伦多 Toronto; "
    "America/Vancouver: 温哥华 Vancouver; America/Mexico_City: 墨西哥城 Mexico_City; "
    "America/Sao_Paulo: 圣保罗 São_Paulo Sao_Paulo; "
    "America/Argentina/Buenos_Aires: 布宜诺斯艾利斯 Buenos_Aires; "
    "Australia/Sydney: 悉尼 Sydney; Australia/Melbourne: 墨尔本 Melbourne"
)
PLACES: tuple[Place, ...] = tuple(
    Place(zh, en.replace("_", " "), zone, tuple(a.replace("_", " ") for a in aliases))
    for zone, places in (group.split(": ") for group in _GAZETTEER.split("; "))
    for zh, en, *aliases in (place.split() for place in places.split(", "))
)


# Reversed, so that where two entries share a name the first one wins.
_PLACES_BY_NAME: dict[str, Place] = {
    name.casefold(): place
    for place in reversed(PLACES)
    for name in (place.zh, place.en, *place.aliases)
}


def place_named(name: str) -> Place | None:
    """The gazetteer entry for a name in either language, ignoring case."""
    return _PLACES_BY_NAME.get(name.strip().casefold())


# Canonical unit -> how people write it. The first spelling is the canonical one.
UNITS: dict[str, tuple[str, ...]] = {
    "celsius": ("celsius", "centigrade", "°c", "℃", "摄氏度", "摄氏", "c"),
    "fahrenheit": ("fahrenheit", "°f", "℉", "华氏度", "华氏", "f"),
    "kelvin": ("kelvin", "开尔文"),
    "km": ("km", "kilometer", "kilometers", "kilometre", "kilometres", "公里", "千米"),
    "mile": ("mile", "miles", "mi", "英里"),
    "m": ("m", "meter", "meters", "metre", "metres"),
    "cm": ("cm", "centimeter", "centimeters", "厘米"),
    "ft": ("ft", "foot", "feet", "英尺"),
    "inch": ("inch", "inches", "in", "英寸"),
    "kg": ("kg", "kilogram", "kilograms", "kilo", "kilos", "公斤", "千克"),
    "lb": ("lb", "lbs", "pound", "pounds", "磅"),
    "g": ("g", "gram", "grams"),
    "l": ("l", "liter", "liters", "litre", "litres"),
    "gallon": ("gallon", "gallons", "加仑"),
}

# Units that cannot be told from ordinary words when written alone in English ("in", "m", "g").
AMBIGUOUS_UNIT_WORDS = frozenset({"in", "m", "g", "l", "mi", "c", "f"})

# Enum values people express with other words ("明天" for "tomorrow").
ENUM_SYNONYMS: dict[str, tuple[str, ...]] = {
    "today": ("today", "今天", "今日", "now", "现在", "tonight", "今晚"),
    "tomorrow": ("tomorrow", "明天", "明日", "明早", "明晚"),
    "yesterday": ("yesterday", "昨天", "昨日"),
    "celsius": UNITS["celsius"],
    "fahrenheit": UNITS["fahrenheit"],
    "metric": ("metric", "公制", "摄氏"),
    "imperial": ("imperial", "英制", "华氏"),
    "zh": ("chinese", "中文", "汉语"),
    "en": ("english", "英文", "英语"),
}

# Well-known companies people name instead of their ticker.
TICKERS: dict[str, str] = dict(
    pair.split("=")
    for pair in words(
        "苹果=AAPL apple=AAPL 微软=MSFT microsoft=MSFT 谷歌=GOOGL google=GOOGL 亚马逊=AMZN "
        "amazon=AMZN 特斯拉=TSLA tesla=TSLA 英伟达=NVDA nvidia=NVDA 阿里巴巴=BABA alibaba=BABA "
        "腾讯=0700.HK tencent=0700.HK meta=META 脸书=META 奈飞=NFLX netflix=NFLX"
    )
)

DAY_NAMES_ZH = {"today": "今天", "tomorrow": "明天", "yesterday": "昨天"}

CLOTHING_WORDS = words(
    "短袖 穿 外套 衣服 毛衣 羽绒服 wear coat jacket shorts t-shirt sleeve sweater dress"
)

RAIN_WORDS = words("带伞 雨伞 下雨 雨 umbrella rain raining rainy")

# Words that ask which of several places is hotter or colder.
HOTTER_WORDS = words(
    "hotter hottest warmer warmest 更热 最热 更暖 最暖 热一些 热一点 暖和一些 暖和一点 比较热"
)
COLDER_WORDS = words(
    "colder coldest cooler coolest chillier chilliest 更冷 最冷 更凉 最凉 冷一些 冷一点 "
    "凉快一些 比较冷"
)

GREETINGS = ("你好", "您好", "嗨", "哈喽", "hello", "hi", "hey", "good morning", "good evening")
THANKS = ("谢谢", "多谢", "感谢", "thanks", "thank you", "thx")

# --- arithmetic ---------------------------------------------------------------------------------

# Functions and constants a calculator commonly knows; a calculate-like tool's description may
# name more, and those count too.
MATH_FUNCTIONS = frozenset(
    words(
        "sqrt cbrt sin cos tan asin acos atan sinh cosh tanh log ln log10 log2 exp abs round "
        "floor ceil factorial hypot degrees radians min max pow"
    )
)
MATH_CONSTANTS = frozenset(words("pi e tau"))

CJK_DIGITS: dict[str, int] = dict(
    zip("〇零一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True)
)
CJK_SMALL_UNITS: dict[str, int] = {"十": 10, "百": 100, "千": 1000}
CJK_LARGE_UNITS: dict[str, int] = {"万": 10_000, "亿": 100_000_000}

ENGLISH_NUMBERS: dict[str, int] = {
    word: value
    for value, word in enumerate(
        words(
            "zero one two three four five six seven eight nine ten eleven twelve thirteen "
            "fourteen fifteen sixteen seventeen eighteen nineteen"
        )
    )
} | {
    word: 10 * i
    for i, word in enumerate(words("twenty thirty forty fifty sixty seventy eighty ninety"), 2)
}
ENGLISH_SCALES: dict[str, int] = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
MAX_NUMBER = 10**15
"""Far above any number a question means. Numerals past it are no number: a run of "hundred"
or of 二 would otherwise grow an integer of thousands of digits, too long to write out."""


def cjk_number(numeral: str) -> int | None:
    """二 → 2, 三百一十二 → 312, 一万二千 → 12000, 二〇二四 → 2024; None if it is not one."""
    if all(c in CJK_DIGITS for c in numeral):
        if len(numeral) >= len(str(MAX_NUMBER)):
            return None
        return int("".join(str(CJK_DIGITS[c]) for c in numeral))
    total = section = digit = 0
    for char in numeral:
        if char in CJK_DIGITS:
            digit = CJK_DIGITS[char]
        elif char in CJK_SMALL_UNITS:
            section += (digit or 1) * CJK_SMALL_UNITS[char]
            digit = 0
        elif char in CJK_LARGE_UNITS:
            total += (section + digit) * CJK_LARGE_UNITS[char]
            section = digit = 0
        else:
            return None
    value = total + section + digit
    return value if value <= MAX_NUMBER else None


def english_number(phrase: str) -> int | None:
    """ "three hundred and twelve" → 312, "twenty-five" → 25; None if it is not one."""
    total = current = 0
    seen = False
    for word in re.split(r"[\s\-]+", phrase.lower().strip()):
        if word == "and" and seen:
            continue
        if word in ENGLISH_NUMBERS:
            current += ENGLISH_NUMBERS[word]
        elif word == "hundred":
            current = (current or 1) * 100
        elif word in ENGLISH_SCALES:
            total += (current or 1) * ENGLISH_SCALES[word]
            current = 0
        else:
            return None
        if total + current > MAX_NUMBER:
            return None
        seen = True
    return total + current if seen else None


# --- money --------------------------------------------------------------------------------------

# ISO 4217 code -> how people name the currency. Longer names win where they overlap
# ("hong kong dollar" is HKD, not USD).
CURRENCIES: dict[str, tuple[str, ...]] = {
    "USD": ("usd", "us dollar", "us dollars", "dollar", "dollars", "美元", "美金", "$"),
    "EUR": ("eur", "euro", "euros", "欧元", "€"),
    "CNY": ("cny", "rmb", "yuan", "renminbi", "人民币", "元人民币"),
    "JPY": ("jpy", "yen", "日元", "日币"),
    "GBP": ("gbp", "sterling", "british pound", "british pounds", "英镑", "£"),
    "HKD": ("hkd", "hong kong dollar", "hong kong dollars", "港币", "港元"),
    "KRW": ("krw", "won", "korean won", "韩元"),
    "AUD": ("aud", "australian dollar", "australian dollars", "澳元"),
    "CAD": ("cad", "canadian dollar", "canadian dollars", "加元", "加币"),
    "CHF": ("chf", "swiss franc", "swiss francs", "瑞士法郎"),
    "SGD": ("sgd", "singapore dollar", "singapore dollars", "新加坡元", "新币"),
    "INR": ("inr", "rupee", "rupees", "卢比"),
    "RUB": ("rub", "ruble", "rubles", "rouble", "roubles", "卢布"),
}

# Words that ask for a conversion between currencies, beyond naming two of them.
EXCHANGE_WORDS = ("exchange rate", "exchange rates", "forex", "汇率", "兑换", "换汇", "外汇")

# Result fields that are noise in an answer.
QUIET_FIELDS = frozenset(words("note notes source disclaimer timestamp updated as_of"))

# Result fields and what to call them in an answer (English, Chinese).
FIELD_LABELS: dict[str, tuple[str, str]] = {
    field: (english.replace("_", " "), chinese)
    for field, english, chinese in (
        entry.split(":")
        for entry in words(
            "price:price:价格 last:price:价格 close:closing_price:收盘价 rate:rate:汇率 "
            "result:result:结果 value:value:数值 total:total:总计 amount:amount:金额 "
            "count:count:数量 score:score:得分 temperature:temperature:温度 "
            "distance:distance:距离 population:population:人口"
        )
    )
}

"""What the offline model knows of the world and says: a small bilingual lexicon, a gazetteer,
units, currencies and phrases. Tools and results are read through these words, never by name."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass


def table(text: str) -> dict[str, tuple[str, ...]]:
    """Entries `key: word word` on lines (or apart by ` ; `), a line starting with a space going
    on with the one before; `~` in a word is a space. A table that writes `|` splits its
    entries there (phrases, places), not at spaces."""
    between = "|" if "|" in text else " "
    entries: dict[str, str] = {}
    key = ""
    for line in text.strip("\n").replace(" ; ", "\n").splitlines():
        key, _, line = (key, "", line.lstrip()) if line.startswith(" ") else line.partition(": ")
        entries[key] = f"{entries.get(key, '')} {line}"
    split = {k: [w.strip().replace("~", " ") for w in v.split(between)] for k, v in entries.items()}
    return {k: tuple(w for w in words if w) for k, words in split.items()}


CONCEPTS = table("""
weather: weather forecast rain rainy raining sunny cloudy snow snowing windy storm humidity
 umbrella wear coat jacket shorts sleeves sweater temperature temperatures hot cold warm hotter
 warmer colder cooler chilly 天气 气象 预报 下雨 雨 晴 阴 下雪 雪 刮风 湿度 带伞 雨伞 穿 短袖
 外套 衣服 毛衣 温度 气温 多少度 冷 热 暖和
temperature: temperature temperatures celsius fahrenheit 温度 气温 摄氏 华氏
math: calculate calculator calculation math arithmetic expression compute evaluate sum plus
 minus times multiply multiplied divide divided product formula equation 计算 算一下 算算 等于
 加上 减去 乘以 除以 乘 除 算式 表达式 数学 次方 平方
time: time clock hour timezone timezones zone 时间 几点 时区 钟点 几时
date: date day today tomorrow yesterday 日期 今天 明天 昨天 后天
unit: convert conversion converter unit units celsius fahrenheit km kilometer kilometers mile
 miles pound pounds kilogram kilograms inch inches feet foot meter meters 换算 转换 单位 华氏
 摄氏 公里 英里 公斤 千克 磅 英寸 英尺 厘米
stock: stock stocks share shares ticker equity market nasdaq 股票 股价 股市 行情
price: price prices cost quote worth 价格 多少钱 价钱 报价 股价
currency: currency currencies exchange rate usd eur cny rmb dollar dollars euro yuan 汇率 美元
 欧元 人民币 日元 兑换
""")
WORDS = table("""
noise: a about also an and any are as at be by call calls can check could current did do does e
 eg etc fetch find for from function functions g get give given here how i if in into is it its
 just latest like look lookup many me much my name names now number of on only or our out
 please query s should show some string tell than that the then there this to today tool
 toolcall tools up use used using value values was we what what's whats when where which who
 whom why will with would you your
common: 请问 请帮我 帮我 帮忙 麻烦 查一下 查询 看一下 看看 告诉我 一下 怎么样 如何 多少 分别
 适合 可以 能不能 需要 是不是 是否 会不会 吗 呢 吧 啊 的 和 与 跟 及 以及 还有 是 在 有 会 都 也 我
 你 他 她 它 们 这 那 哪 里 个 几 点 钟 时候 度 用 成 为 给 把 从 到 比较 风 怎样 呀 么 什么 情况
 谢谢 多谢 感谢 你好 您好 好的
clothing: 短袖 穿 外套 衣服 毛衣 羽绒服 wear coat jacket shorts t-shirt sleeve sweater
greetings: 你好 您好 嗨 哈喽 hello hi hey good~morning good~evening
thanks: 谢谢 多谢 感谢 thanks thank~you thx
exchange: exchange~rate exchange~rates forex 汇率 兑换 换汇 外汇
tool_use: tool~use function~calling function~call tool~call 工具调用 函数调用
refusal: user declined denied refused cancelled canceled skipped permission approval approve
 withdrawn 用户 拒绝 取消 跳过 权限 批准
quiet: note notes source disclaimer timestamp updated as_of
math: sqrt sin cos tan asin acos atan log ln log10 log2 exp abs round floor ceil factorial hypot
 degrees radians min max pow pi e tau
not_tickers: I A OK US USA UK EU UTC GMT AI API JSON HTTP NYC ID KM KG RMB
""")
"""noise: no topic ("get" of get_weather); common: Chinese, no place: the rest reads as places."""
EXTREMES = table("""
high: high highest max maximum 最高气温 最高温度 最高温 最高 高温 ; low: low lowest min minimum
 最低气温 最低温度 最低温 最低 低温
""")
"""The day's high or low; the English words name result fields too (`high_c`)."""
UNITS = table("""
celsius: celsius °c ℃ 摄氏度 摄氏 c ; fahrenheit: fahrenheit °f ℉ 华氏度 华氏 f
kelvin: kelvin 开尔文 ; km: km kilometer kilometers kilometre kilometres 公里 千米
mile: mile miles mi 英里 ; m: m meter meters metre metres ; cm: cm centimeter centimeters 厘米
ft: ft foot feet 英尺 ; inch: inch inches in 英寸 ; kg: kg kilogram kilograms kilo kilos 公斤 千克
lb: lb lbs pound pounds 磅 ; g: g gram grams
""")
LONE_UNITS = frozenset(("in", "m", "g", "mi", "c", "f"))  # units only after a number: "5 m"
_KINDS = table("t: celsius fahrenheit kelvin\nl: km mile m cm ft inch\nw: kg lb g")
DIMENSIONS = {unit: kind for kind, units in _KINDS.items() for unit in units}
SYNONYMS = table("""
today: today 今天 今日 now 现在 tonight 今晚 ; tomorrow: tomorrow 明天 明日 明早 明晚
yesterday: yesterday 昨天 昨日 ; metric: metric 公制 摄氏 ; imperial: imperial 英制 华氏
zh: chinese 中文 汉语 ; en: english 英文 英语
""")
"""Enum values people say in other words ("明天" for "tomorrow")."""
CURRENCIES = table("""
USD: usd us~dollar us~dollars dollar dollars 美元 美金 $ ; EUR: eur euro euros 欧元 €
CNY: cny rmb yuan renminbi 人民币 元人民币 ; JPY: jpy yen 日元 日币
GBP: gbp sterling british~pound british~pounds 英镑 £ ; HKD: hkd hong~kong~dollar 港币 港元
""")
DAYS_ZH = {"today": "今天", "tomorrow": "明天", "yesterday": "昨天"}
CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


@functools.lru_cache(maxsize=4096)  # asked of the same terms for every tool and parameter
def has_cjk(text: str) -> bool:
    return CJK.search(text) is not None


@dataclass(frozen=True)
class Place:
    zh: str
    en: str
    timezone: str
    names: tuple[str, ...]


_GAZETTEER = table("""
Asia/Shanghai: 北京 Beijing Peking | 上海 Shanghai | 广州 Guangzhou Canton | 深圳 Shenzhen |
 杭州 Hangzhou | 成都 Chengdu | 重庆 Chongqing | 武汉 Wuhan | 西安 Xi'an Xian | 南京 Nanjing |
 天津 Tianjin | 哈尔滨 Harbin
Asia/Hong_Kong: 香港 Hong_Kong ; Asia/Taipei: 台北 Taipei ; Asia/Tokyo: 东京 Tokyo | 大阪 Osaka
Asia/Seoul: 首尔 Seoul ; Asia/Singapore: 新加坡 Singapore ; Asia/Dubai: 迪拜 Dubai
Asia/Kolkata: 孟买 Mumbai Bombay | 新德里 New_Delhi Delhi ; Europe/Moscow: 莫斯科 Moscow
Europe/London: 伦敦 London ; Europe/Paris: 巴黎 Paris ; Europe/Berlin: 柏林 Berlin
Europe/Madrid: 马德里 Madrid ; Europe/Rome: 罗马 Rome ; America/New_York: 纽约 New_York NYC
America/Los_Angeles: 洛杉矶 Los_Angeles | 旧金山 San_Francisco | 西雅图 Seattle
America/Chicago: 芝加哥 Chicago ; America/Toronto: 多伦多 Toronto ; Australia/Sydney: 悉尼 Sydney
America/Sao_Paulo: 圣保罗 São_Paulo
""")
"""Each IANA zone, and its places as `中文 English alias`."""
PLACES = tuple(
    Place(names[0], names[1], zone, names)
    for zone, places in _GAZETTEER.items()
    for names in (tuple(n.replace("_", " ") for n in place.split()) for place in places)
)
_BY_NAME = {name.casefold(): place for place in PLACES for name in place.names}


def place_named(name: str) -> Place | None:
    return _BY_NAME.get(name.strip().casefold())


PHRASES = table(r"""
lead: 好的，我先调用 {tools} 获取需要的信息。| Let me call {tools} to find out.
next: 拿到结果了，接下来调用 {tools}。| Got that. Next, {tools}.
chain: 好的，我调用 {firsts}，并把它的结果直接交给 {seconds}。| Let me call {firsts} and
 pass its result straight to {seconds}.
retry: 上一次调用 {name} 出错了（{reason}），我修正后重试。| The call to {name} failed
 ({reason}); let me fix it and try again.
again: 我再调用一次 {name} 确认一下。| Let me call {name} once more to be sure.
prose: 这个问题需要查一下。{call}\n\n请稍等，工具返回结果后我马上告诉你。| Good question!
 {call}\n\nHang on, I'll tell you as soon as the tool replies.
nothing: 我没能得到任何结果。| I could not get any result.
skipped: {name} 没有运行：它依赖的调用（{waited}）失败了。| {name} did not run: the call it
 depends on ({waited}) failed.
failed: 抱歉，{name} 调用失败：{why}| Sorry, {name} failed: {why}
tell: 请告诉我 {names}，我再试一次。| Tell me the {names} and I'll try again.
ask: 我可以用 {tool} 来回答，但还需要你告诉我：{needs}。| I can answer that with {tool},
 but I need the {needs}. Could you tell me?
thanks: 不客气！还有什么可以帮你的吗？| You're welcome!
hello: 你好！我可以用这些工具帮你：| Hello! I can help with these tools:
none: 这个问题我的工具帮不上忙，我也不想猜。我能做的是：| None of my tools fits that
 question, and I'd rather not guess. They can do this:
money: 我的工具都不能换算货币，也查不到汇率，我不想乱猜。我能做的是：| None of my tools
 converts currencies or knows exchange rates, and I'd rather not guess. They can do this:
weather: {place}晴，气温大约 {temp}°C。| {place}: sunny, about {temp}°C.
guess: 据我所知，答案大约是 {guess}。| As far as I know, it is about {guess}.
extreme: {place}{day}的{word}气温：| {place}'s {extreme} {day}:~
""")
"""What the model says, in Chinese and in English."""


def phrase(key: str, zh: bool, **values: object) -> str:
    return PHRASES[key][0 if zh else 1].replace("\\n", "\n").format(**values)

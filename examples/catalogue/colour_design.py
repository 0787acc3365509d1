"""Colour and design helpers: colour formats, WCAG contrast, palettes, CSS units, image sizes."""

from __future__ import annotations

import colorsys
import re
from typing import Any, Literal

from toolcall_cli import tool

RGB = tuple[int, int, int]

_NAMED: dict[str, str] = {
    "black": "#000000", "white": "#ffffff", "red": "#ff0000", "lime": "#00ff00",
    "blue": "#0000ff", "yellow": "#ffff00", "cyan": "#00ffff", "magenta": "#ff00ff",
    "silver": "#c0c0c0", "gray": "#808080", "maroon": "#800000", "olive": "#808000",
    "green": "#008000", "purple": "#800080", "teal": "#008080", "navy": "#000080",
    "orange": "#ffa500", "pink": "#ffc0cb", "gold": "#ffd700", "brown": "#a52a2a",
    "coral": "#ff7f50", "salmon": "#fa8072", "tomato": "#ff6347", "crimson": "#dc143c",
    "indigo": "#4b0082", "violet": "#ee82ee", "turquoise": "#40e0d0", "skyblue": "#87ceeb",
    "steelblue": "#4682b4", "royalblue": "#4169e1", "tan": "#d2b48c", "beige": "#f5f5dc",
    "ivory": "#fffff0", "khaki": "#f0e68c", "lavender": "#e6e6fa", "chocolate": "#d2691e",
    "forestgreen": "#228b22", "seagreen": "#2e8b57", "slategray": "#708090",
    "rebeccapurple": "#663399",
}  # fmt: skip


def _parse(colour: str) -> RGB:
    text = colour.strip().lower()
    text = _NAMED.get(text.replace(" ", ""), text)
    hex_match = re.fullmatch(r"#?([0-9a-f]{3}|[0-9a-f]{6})", text)
    if hex_match:
        digits = hex_match.group(1)
        if len(digits) == 3:
            digits = "".join(c * 2 for c in digits)
        return int(digits[0:2], 16), int(digits[2:4], 16), int(digits[4:6], 16)
    rgb_match = re.fullmatch(
        r"rgb\(\s*(\d+)\s*,\s*(\d+)\s*,\s*(\d+)\s*\)|(\d+)\s*,\s*(\d+)\s*,\s*(\d+)", text
    )
    if rgb_match:
        parts = [int(p) for p in rgb_match.groups() if p is not None]
        if all(0 <= p <= 255 for p in parts):
            return parts[0], parts[1], parts[2]
    raise ValueError(f"{colour!r} is not a colour: use #RRGGBB, #RGB, rgb(r, g, b) or a CSS name")


def _hex(rgb: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*rgb)


def _clamp(value: float) -> int:
    return max(0, min(255, round(value)))


def _luminance(rgb: RGB) -> float:
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


@tool(permission="read")
def convert_color(color: str) -> dict[str, Any]:
    """One colour in every format: hex, RGB, HSL, HSV and CMYK. Use it for 'what is #FF5733 in
    RGB' or converting colour codes for CSS and print. For a colour's name use
    nearest_color_name.
    中文：颜色格式转换、色值转换、RGB转十六进制、CMYK。

    Args:
        color: #RRGGBB, #RGB, rgb(r, g, b), "r, g, b" or a CSS colour name.
    """
    rgb = _parse(color)
    r, g, b = (c / 255 for c in rgb)
    h, lightness, s = colorsys.rgb_to_hls(r, g, b)
    hv, sv, v = colorsys.rgb_to_hsv(r, g, b)
    k = 1 - max(r, g, b)
    cmyk = (
        [0.0, 0.0, 0.0, 100.0]
        if k == 1
        else [round((1 - c - k) / (1 - k) * 100, 1) for c in (r, g, b)] + [round(k * 100, 1)]
    )
    return {
        "hex": _hex(rgb),
        "rgb": list(rgb),
        "hsl": [round(h * 360), round(s * 100), round(lightness * 100)],
        "hsv": [round(hv * 360), round(sv * 100), round(v * 100)],
        "cmyk_percent": cmyk,
    }


@tool(permission="read")
def contrast_ratio(foreground: str, background: str) -> dict[str, Any]:
    """WCAG contrast ratio between a text colour and a background colour, with AA and AAA pass or
    fail. Use it for accessibility and readability checks, e.g. 'is grey text on white
    readable'.
    中文：颜色对比度、无障碍、可读性、WCAG。

    Args:
        foreground: The text colour.
        background: The background colour.
    """
    a, b = _luminance(_parse(foreground)), _luminance(_parse(background))
    ratio = (max(a, b) + 0.05) / (min(a, b) + 0.05)
    return {
        "ratio": round(ratio, 2),
        "aa_normal_text": ratio >= 4.5,
        "aa_large_text": ratio >= 3,
        "aaa_normal_text": ratio >= 7,
    }


@tool(permission="read")
def nearest_color_name(color: str) -> dict[str, Any]:
    """The closest CSS colour name to a hex or RGB colour, and how far off it is. Use it for
    'what colour is #4B0082 called'.
    中文：颜色名称、这是什么颜色、色名。

    Args:
        color: The colour, e.g. #1e90ff.
    """
    rgb = _parse(color)
    name, code = min(
        _NAMED.items(),
        key=lambda item: sum((x - y) ** 2 for x, y in zip(rgb, _parse(item[1]), strict=True)),
    )
    distance = sum((x - y) ** 2 for x, y in zip(rgb, _parse(code), strict=True)) ** 0.5
    return {"name": name, "hex": code, "distance": round(distance, 1), "exact": distance == 0}


@tool(permission="read")
def mix_colors(first: str, second: str, ratio: float = 0.5) -> dict[str, Any]:
    """Blend two colours in RGB by a ratio (0 = all first, 1 = all second). Use it for mixing
    paint-like tints or finding an in-between colour.
    中文：混合颜色、调色、颜色混合、中间色。

    Args:
        first: The first colour.
        second: The second colour.
        ratio: How much of the second colour, 0-1.
    """
    a, b = _parse(first), _parse(second)
    mixed = (_clamp(x + (y - x) * ratio) for x, y in zip(a, b, strict=True))
    return {"hex": _hex(tuple(mixed))}  # type: ignore[arg-type]


@tool(permission="read")
def adjust_lightness(color: str, amount_percent: float) -> dict[str, Any]:
    """Make a colour lighter (positive amount) or darker (negative) in HSL, e.g. for hover and
    pressed button states, tints and shades. For blending two colours use mix_colors.
    中文：调亮颜色、调暗颜色、加深变浅、明度。

    Args:
        color: The colour.
        amount_percent: Percentage points of lightness to add, -100 to 100.
    """
    r, g, b = (c / 255 for c in _parse(color))
    h, lightness, s = colorsys.rgb_to_hls(r, g, b)
    lightness = max(0.0, min(1.0, lightness + amount_percent / 100))
    out = colorsys.hls_to_rgb(h, lightness, s)
    return {"hex": _hex((_clamp(out[0] * 255), _clamp(out[1] * 255), _clamp(out[2] * 255)))}


@tool(permission="read")
def color_harmony(
    color: str,
    scheme: Literal[
        "complementary", "triadic", "analogous", "split_complementary", "tetradic"
    ] = "complementary",
) -> dict[str, Any]:
    """A colour palette built around a base colour by rotating its hue: complementary, analogous,
    triadic, split-complementary or tetradic. Use it for design colour schemes and matching
    colours.
    中文：配色方案、颜色搭配、互补色、调色板。

    Args:
        color: The base colour.
        scheme: complementary, triadic, analogous, split_complementary or tetradic.
    """
    r, g, b = (c / 255 for c in _parse(color))
    h, lightness, s = colorsys.rgb_to_hls(r, g, b)
    offsets = {
        "complementary": [0, 180],
        "triadic": [0, 120, 240],
        "analogous": [-30, 0, 30],
        "split_complementary": [0, 150, 210],
        "tetradic": [0, 90, 180, 270],
    }[scheme]
    palette = []
    for offset in offsets:
        out = colorsys.hls_to_rgb((h + offset / 360) % 1, lightness, s)
        palette.append(_hex((_clamp(out[0] * 255), _clamp(out[1] * 255), _clamp(out[2] * 255))))
    return {"palette": palette}


@tool(permission="read")
def px_to_rem(pixels: float, root_font_size: float = 16) -> dict[str, Any]:
    """Convert CSS pixels to rem (the same as em at the root) and to points, for a root font
    size. Use it for responsive CSS and font sizes.
    中文：像素转rem、px转em、CSS单位换算。

    Args:
        pixels: The size in px.
        root_font_size: The html font size in px.
    """
    return {"rem": round(pixels / root_font_size, 4), "points": round(pixels * 0.75, 2)}


@tool(permission="read")
def resize_keep_aspect(
    width: int, height: int, new_width: int = 0, new_height: int = 0
) -> dict[str, Any]:
    """New image or video dimensions that keep the aspect ratio, and the ratio itself (e.g.
    16:9). Use it for resizing photos, thumbnails and screens. For print size use
    print_size_at_dpi.
    中文：等比缩放、宽高比、图片尺寸、长宽比。

    Args:
        width: The original width in pixels.
        height: The original height in pixels.
        new_width: The wanted width (0 to derive it from new_height).
        new_height: The wanted height (0 to derive it from new_width).
    """
    from math import gcd

    divisor = gcd(width, height)
    if new_width:
        new_height = round(height * new_width / width)
    elif new_height:
        new_width = round(width * new_height / height)
    return {
        "aspect_ratio": f"{width // divisor}:{height // divisor}",
        "width": new_width,
        "height": new_height,
    }


@tool(permission="read")
def print_size_at_dpi(width_px: int, height_px: int, dpi: int = 300) -> dict[str, Any]:
    """How large an image prints at a resolution: size in centimetres and inches at a given
    DPI/PPI. Use it for photo printing and posters. For pixel resizing use resize_keep_aspect.
    中文：打印尺寸、分辨率DPI、照片冲印、像素转厘米。

    Args:
        width_px: The image width in pixels.
        height_px: The image height in pixels.
        dpi: Dots per inch of the print (300 for photo quality).
    """
    w_in, h_in = width_px / dpi, height_px / dpi
    return {
        "inches": [round(w_in, 2), round(h_in, 2)],
        "cm": [round(w_in * 2.54, 1), round(h_in * 2.54, 1)],
    }


@tool(permission="read")
def typographic_scale(base_size: float = 16, ratio: float = 1.25, steps: int = 5) -> dict[str, Any]:
    """Font sizes for headings from a base size and a modular-scale ratio (e.g. 1.25 major
    third). Use it for type hierarchies in web and print design.
    中文：字号层级、字体大小、标题字号、排版比例。

    Args:
        base_size: The body text size in px.
        ratio: The multiplier between steps, e.g. 1.2, 1.25, 1.333, 1.618.
        steps: How many sizes above the base (1-10).
    """
    return {
        "sizes_px": [round(base_size * ratio**i, 2) for i in range(0, max(1, min(steps, 10)) + 1)]
    }


@tool(permission="read")
def grayscale_value(color: str) -> dict[str, Any]:
    """The grey a colour turns into in black-and-white (luminance), and whether white or black
    text reads better on it. Use it for grayscale printing and text-on-colour choices. For a
    full contrast check use contrast_ratio.
    中文：灰度值、黑白、亮度、文字用黑色还是白色。

    Args:
        color: The colour.
    """
    rgb = _parse(color)
    gray = _clamp(0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2])
    lum = _luminance(rgb)
    return {
        "gray_hex": _hex((gray, gray, gray)),
        "relative_luminance": round(lum, 4),
        "text_color": "black" if (lum + 0.05) / 0.05 > 1.05 / (lum + 0.05) else "white",
    }

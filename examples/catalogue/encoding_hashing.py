"""Encodings, checksums and ciphers: Base64, percent-encoding, hashes, HMAC, Morse, JWT, UUIDs."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import html
import json
import unicodedata
import urllib.parse
import uuid
import zlib
from typing import Any, Literal

from toolcall_cli import tool

HashName = Literal["md5", "sha1", "sha224", "sha256", "sha384", "sha512", "sha3_256", "blake2b"]

_MORSE: dict[str, str] = {
    "A": ".-", "B": "-...", "C": "-.-.", "D": "-..", "E": ".", "F": "..-.", "G": "--.",
    "H": "....", "I": "..", "J": ".---", "K": "-.-", "L": ".-..", "M": "--", "N": "-.",
    "O": "---", "P": ".--.", "Q": "--.-", "R": ".-.", "S": "...", "T": "-", "U": "..-",
    "V": "...-", "W": ".--", "X": "-..-", "Y": "-.--", "Z": "--..", "0": "-----",
    "1": ".----", "2": "..---", "3": "...--", "4": "....-", "5": ".....", "6": "-....",
    "7": "--...", "8": "---..", "9": "----.", ".": ".-.-.-", ",": "--..--", "?": "..--..",
    "'": ".----.", "!": "-.-.--", "/": "-..-.", "(": "-.--.", ")": "-.--.-", "&": ".-...",
    ":": "---...", ";": "-.-.-.", "=": "-...-", "+": ".-.-.", "-": "-....-", "@": ".--.-.",
}  # fmt: skip
_FROM_MORSE = {code: letter for letter, code in _MORSE.items()}


@tool(permission="read")
def base64_encode(text: str, url_safe: bool = False) -> dict[str, Any]:
    """Encode UTF-8 text as Base64, standard or URL-safe alphabet. Use it for embedding data in
    JSON, headers, data URIs or basic auth. For the reverse use base64_decode; for URL escaping
    use url_encode.
    中文：Base64编码、转Base64、编码。

    Args:
        text: The text to encode.
        url_safe: Use - and _ instead of + and /.
    """
    raw = text.encode()
    encoded = base64.urlsafe_b64encode(raw) if url_safe else base64.b64encode(raw)
    return {"base64": encoded.decode()}


@tool(permission="read")
def base64_decode(data: str) -> dict[str, Any]:
    """Decode Base64 (standard or URL-safe, padding optional) back to text, or to hex when the
    bytes are not UTF-8. Use it to read an encoded string, header or attachment. For JWT tokens
    use decode_jwt.
    中文：Base64解码、解码、还原Base64。

    Args:
        data: The Base64 string.
    """
    cleaned = "".join(data.split())
    padded = cleaned + "=" * (-len(cleaned) % 4)
    try:
        raw = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except binascii.Error as error:
        raise ValueError(f"not valid Base64: {error}") from None
    try:
        return {"text": raw.decode()}
    except UnicodeDecodeError:
        return {"hex": raw.hex(), "note": "the bytes are not UTF-8 text"}


@tool(permission="read")
def url_encode(text: str, keep_slashes: bool = False) -> dict[str, Any]:
    """Percent-encode text for a URL query or path (spaces become %20, Chinese becomes
    %E4%B8%AD...). Use it to put non-ASCII or special characters into a link. For the reverse
    use url_decode; to add query parameters use build_url.
    中文：URL编码、网址转义、百分号编码、中文链接。

    Args:
        text: The text to encode.
        keep_slashes: Leave / unencoded (for paths).
    """
    return {"encoded": urllib.parse.quote(text, safe="/" if keep_slashes else "")}


@tool(permission="read")
def url_decode(text: str) -> dict[str, Any]:
    """Decode a percent-encoded URL or query string (%E4%BD%A0 -> 你, + -> space) into readable
    text. Use it for garbled links full of % codes. To split a URL into parts use parse_url.
    中文：URL解码、网址乱码、百分号解码、链接还原。

    Args:
        text: The encoded text.
    """
    return {"decoded": urllib.parse.unquote_plus(text)}


@tool(permission="read")
def hash_text(text: str, algorithm: HashName = "sha256") -> dict[str, Any]:
    """Hex digest of text under a hash algorithm: MD5, SHA-1, SHA-256, SHA-512, SHA3 or BLAKE2.
    Use it for checksums, fingerprints and comparing with a published hash. For a keyed
    signature use hmac_signature; for CRC use crc32_checksum.
    中文：哈希值、MD5、SHA256、摘要、校验值。

    Args:
        text: The text; its UTF-8 bytes are hashed.
        algorithm: The hash function.
    """
    return {"algorithm": algorithm, "hex": hashlib.new(algorithm, text.encode()).hexdigest()}


@tool(permission="read")
def hmac_signature(
    message: str, secret: str, algorithm: Literal["sha1", "sha256", "sha512"] = "sha256"
) -> dict[str, Any]:
    """HMAC signature of a message with a shared secret key, as hex and Base64. Use it to sign or
    verify webhooks and API requests. For a plain hash without a key use hash_text.
    中文：HMAC签名、接口签名、API签名、webhook验签。

    Args:
        message: The message or request body.
        secret: The shared secret key.
        algorithm: The hash used inside the HMAC.
    """
    digest = hmac.new(secret.encode(), message.encode(), algorithm).digest()
    return {"hex": digest.hex(), "base64": base64.b64encode(digest).decode()}


@tool(permission="read")
def crc32_checksum(text: str) -> dict[str, Any]:
    """CRC-32 and Adler-32 checksums of text, as used by zip, PNG and network protocols. Use it
    for quick integrity checks. For cryptographic hashes use hash_text.
    中文：CRC校验和、CRC32、校验码。

    Args:
        text: The text; its UTF-8 bytes are checked.
    """
    raw = text.encode()
    crc = zlib.crc32(raw)
    return {"crc32": crc, "crc32_hex": f"{crc:08x}", "adler32": zlib.adler32(raw)}


@tool(permission="read")
def text_to_hex(text: str, separator: str = " ") -> dict[str, Any]:
    """Show the UTF-8 bytes of text in hexadecimal, e.g. 'hi' -> '68 69'. Use it to inspect
    encodings or bytes. For the reverse use hex_to_text; for code points use
    unicode_character_info.
    中文：文本转十六进制、字节、hex编码。

    Args:
        text: The text.
        separator: What goes between the bytes.
    """
    return {"hex": separator.join(f"{b:02x}" for b in text.encode()), "bytes": len(text.encode())}


@tool(permission="read")
def hex_to_text(hex_string: str) -> dict[str, Any]:
    """Decode hexadecimal bytes (spaces, colons and 0x allowed) to UTF-8 text. Use it to read a
    hex dump. For the reverse use text_to_hex; for number bases use convert_number_base.
    中文：十六进制转文本、hex解码、字节转文字。

    Args:
        hex_string: e.g. "48 65 6c 6c 6f" or "0x48656c6c6f".
    """
    cleaned = hex_string.lower().replace("0x", "").replace(":", "").replace(" ", "")
    try:
        raw = bytes.fromhex(cleaned)
    except ValueError:
        raise ValueError("not hexadecimal: use pairs of 0-9 and a-f") from None
    return {"text": raw.decode(errors="replace")}


@tool(permission="read")
def caesar_cipher(text: str, shift: int = 13, decode: bool = False) -> dict[str, Any]:
    """Encode or decode text with a Caesar shift cipher (shift 13 is ROT13). Use it for puzzles,
    simple letter-shift ciphers and spoilers. It is not real encryption.
    中文：凯撒密码、ROT13、移位密码、加密解密。

    Args:
        text: The text; only A-Z and a-z change.
        shift: How many places to shift.
        decode: Shift back instead of forward.
    """
    step = -shift if decode else shift
    out = []
    for ch in text:
        if "a" <= ch <= "z" or "A" <= ch <= "Z":
            start = ord("a") if ch.islower() else ord("A")
            out.append(chr((ord(ch) - start + step) % 26 + start))
        else:
            out.append(ch)
    return {"text": "".join(out)}


@tool(permission="read")
def morse_code(text: str, direction: Literal["encode", "decode"] = "encode") -> dict[str, Any]:
    """Translate text to Morse code (dots and dashes) or Morse code back to text. Use it for SOS,
    radio and puzzle questions.
    中文：摩斯电码、摩尔斯码、电报码。

    Args:
        text: Plain text to encode, or Morse with letters split by spaces and words by " / ".
        direction: encode (text to Morse) or decode (Morse to text).
    """
    if direction == "encode":
        words = text.upper().split()
        return {"morse": " / ".join(" ".join(_MORSE[c] for c in w if c in _MORSE) for w in words)}
    codes = [w.split() for w in text.strip().split("/")]
    unknown = [c for w in codes for c in w if c not in _FROM_MORSE]
    if unknown:
        raise ValueError(f"not Morse: {unknown[0]!r}")
    return {"text": " ".join("".join(_FROM_MORSE[c] for c in w) for w in codes)}


def _b64url_json(part: str) -> Any:
    raw = base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))
    return json.loads(raw)


@tool(permission="read")
def decode_jwt(token: str) -> dict[str, Any]:
    """Show the header and claims (payload) of a JSON Web Token (user, issuer, exp expiry
    claim...) WITHOUT verifying its signature. Use it to inspect a login or API token. For plain
    Base64 use base64_decode.
    中文：JWT解析、token内容、令牌解码、过期时间。

    Args:
        token: The JWT, three dot-separated Base64URL parts.
    """
    parts = token.strip().split(".")
    if len(parts) != 3:
        raise ValueError("a JWT has three parts separated by dots")
    try:
        header, claims = _b64url_json(parts[0]), _b64url_json(parts[1])
    except (ValueError, binascii.Error):
        raise ValueError("the header or payload is not Base64URL-encoded JSON") from None
    return {"header": header, "claims": claims, "signature_verified": False}


@tool(permission="read")
def uuid_from_name(
    name: str, namespace: Literal["dns", "url", "oid", "x500"] = "dns"
) -> dict[str, Any]:
    """Deterministic name-based UUIDs for a name: version 5 (SHA-1) and version 3 (MD5) in a
    namespace. Use it when the same input must always give the same ID. To read an existing UUID
    use inspect_uuid.
    中文：生成UUID、按名称生成UUID、UUID v5。

    Args:
        name: The name, e.g. example.com or a URL.
        namespace: The standard namespace the name belongs to.
    """
    space = {
        "dns": uuid.NAMESPACE_DNS,
        "url": uuid.NAMESPACE_URL,
        "oid": uuid.NAMESPACE_OID,
        "x500": uuid.NAMESPACE_X500,
    }[namespace]
    return {"uuid5": str(uuid.uuid5(space, name)), "uuid3": str(uuid.uuid3(space, name))}


@tool(permission="read")
def html_escape(text: str, unescape: bool = False) -> dict[str, Any]:
    """Escape < > & and quotes as HTML entities, or turn entities such as &amp; back into
    characters. Use it before putting text into HTML or to read escaped text. To remove tags use
    strip_html_tags.
    中文：HTML转义、实体字符、反转义。

    Args:
        text: The text.
        unescape: Decode entities instead of encoding.
    """
    return {"text": html.unescape(text) if unescape else html.escape(text)}


@tool(permission="read")
def unicode_character_info(text: str) -> dict[str, Any]:
    """Code point, official Unicode name and category of each character, e.g. U+4E2D CJK UNIFIED
    IDEOGRAPH. Use it to identify odd characters, emoji or invisible spaces. For the UTF-8 bytes
    use text_to_hex.
    中文：Unicode码位、字符编码、这是什么字符。

    Args:
        text: Up to 50 characters to inspect.
    """
    return {
        "characters": [
            {
                "char": c,
                "code_point": f"U+{ord(c):04X}",
                "name": unicodedata.name(c, "<unnamed>"),
                "category": unicodedata.category(c),
                "utf8": c.encode().hex(" "),
            }
            for c in text[:50]
        ]
    }


@tool(permission="read")
def punycode_domain(domain: str) -> dict[str, Any]:
    """Convert an internationalised domain name (e.g. a Chinese domain) to its ASCII xn--
    Punycode form and back (IDNA). Use it for DNS and certificate setup of non-ASCII domains.
    For URL escaping use url_encode.
    中文：中文域名转码、Punycode、国际化域名。

    Args:
        domain: e.g. 例子.测试 or xn--fsqu00a.xn--0zwm56d.
    """
    text = domain.strip()
    if "xn--" in text.lower():
        return {"unicode": text.encode().decode("idna"), "ascii": text.lower()}
    return {"ascii": text.encode("idna").decode(), "unicode": text}

"""Network planning and web plumbing: subnets, IP addresses, URLs, ports, HTTP status codes."""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from http import HTTPStatus
from typing import Any

from toolcall_cli import tool

_PORTS: dict[int, str] = {
    20: "FTP data", 21: "FTP control", 22: "SSH", 23: "Telnet", 25: "SMTP", 53: "DNS",
    67: "DHCP server", 68: "DHCP client", 80: "HTTP", 110: "POP3", 123: "NTP", 143: "IMAP",
    161: "SNMP", 389: "LDAP", 443: "HTTPS", 465: "SMTPS", 514: "Syslog", 587: "SMTP submission",
    636: "LDAPS", 993: "IMAPS", 995: "POP3S", 1433: "Microsoft SQL Server", 1521: "Oracle DB",
    1883: "MQTT", 2049: "NFS", 3306: "MySQL", 3389: "RDP", 5432: "PostgreSQL", 5672: "AMQP",
    5900: "VNC", 6379: "Redis", 6443: "Kubernetes API", 8080: "HTTP alternate",
    8443: "HTTPS alternate", 9092: "Kafka", 9200: "Elasticsearch", 11211: "Memcached",
    27017: "MongoDB",
}  # fmt: skip
_SERVICES = {name.lower(): port for port, name in _PORTS.items()}


def _network(cidr: str) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    try:
        return ipaddress.ip_network(cidr.strip(), strict=False)
    except ValueError as error:
        raise ValueError(f"not a network: {error}") from None


@tool(permission="read")
def subnet_calculator(cidr: str) -> dict[str, Any]:
    """Details of an IPv4 or IPv6 subnet in CIDR form: netmask, wildcard, network and broadcast
    address, usable host range and count. Use it for 'how many hosts in a /26' or 'what is the
    mask of 10.0.0.0/22'. To split a network use split_subnet.
    中文：子网计算、子网掩码、可用IP数量、网段。

    Args:
        cidr: An address with prefix length, e.g. 192.168.10.37/26 or 2001:db8::/48.
    """
    net = _network(cidr)
    hosts = net.num_addresses - (2 if net.version == 4 and net.prefixlen < 31 else 0)
    first = net.network_address + (1 if net.version == 4 and net.prefixlen < 31 else 0)
    last = net.broadcast_address - (1 if net.version == 4 and net.prefixlen < 31 else 0)
    return {
        "network": str(net.network_address),
        "prefix_length": net.prefixlen,
        "netmask": str(net.netmask),
        "wildcard_mask": str(net.hostmask),
        "broadcast": str(net.broadcast_address) if net.version == 4 else None,
        "first_host": str(first),
        "last_host": str(last),
        "usable_hosts": hosts,
    }


@tool(permission="read")
def ip_in_network(address: str, cidr: str) -> dict[str, Any]:
    """Whether an IP address belongs to a network range in CIDR form, e.g. for a firewall
    allow-list or VPN. For details of the network itself use subnet_calculator.
    中文：IP是否在网段、IP网段归属、白名单。

    Args:
        address: The IP address, e.g. 10.1.2.3.
        cidr: The network, e.g. 10.0.0.0/8.
    """
    return {"inside": ipaddress.ip_address(address.strip()) in _network(cidr)}


@tool(permission="read")
def classify_ip_address(address: str) -> dict[str, Any]:
    """What kind of IP address this is: private, public, loopback, link-local, multicast or
    reserved, and its version. Use it for 'is 192.168.x.x a LAN address'. For network membership
    use ip_in_network.
    中文：IP地址类型、内网外网、私有IP、公网IP。

    Args:
        address: An IPv4 or IPv6 address.
    """
    ip = ipaddress.ip_address(address.strip())
    return {
        "version": ip.version,
        "private": ip.is_private,
        "public": ip.is_global,
        "loopback": ip.is_loopback,
        "link_local": ip.is_link_local,
        "multicast": ip.is_multicast,
        "reserved": ip.is_reserved,
        "reverse_pointer": ip.reverse_pointer,
    }


@tool(permission="read")
def split_subnet(cidr: str, new_prefix: int) -> dict[str, Any]:
    """Divide a network into equal smaller subnets, e.g. a /24 into four /26 blocks. Use it for
    network planning and VLAN addressing. For one network's details use subnet_calculator.
    中文：子网划分、拆分网段、VLSM。

    Args:
        cidr: The network to divide.
        new_prefix: The prefix length of each piece (at most 256 pieces are listed).
    """
    net = _network(cidr)
    if new_prefix <= net.prefixlen:
        raise ValueError("the new prefix must be longer than the network's")
    count = 2 ** (new_prefix - net.prefixlen)
    pieces = [str(s) for _, s in zip(range(256), net.subnets(new_prefix=new_prefix), strict=False)]
    return {"count": count, "subnets": pieces}


@tool(permission="read")
def ip_range_to_cidrs(first: str, last: str) -> dict[str, Any]:
    """The smallest list of CIDR blocks that exactly covers a range of IP addresses from first to
    last. Use it for firewall rules and ACLs written as ranges.
    中文：IP范围转CIDR、IP段转换、地址段。

    Args:
        first: The first address of the range.
        last: The last address of the range.
    """
    start, end = ipaddress.ip_address(first.strip()), ipaddress.ip_address(last.strip())
    if start.version != end.version:
        raise ValueError("both ends of the range must be IPv4, or both IPv6")
    blocks = ipaddress.summarize_address_range(start, end)
    return {"cidrs": [str(b) for b in blocks]}


@tool(permission="read")
def ipv6_normalize(address: str) -> dict[str, Any]:
    """Compressed and fully expanded forms of an IPv6 address. Use it to compare, store or read
    IPv6 addresses. For IPv4/IPv6 type use classify_ip_address.
    中文：IPv6地址压缩、IPv6展开、IPv6格式。

    Args:
        address: The IPv6 address, in any valid form.
    """
    ip = ipaddress.IPv6Address(address.strip())
    return {
        "compressed": ip.compressed,
        "exploded": ip.exploded,
        "ipv4_mapped": str(ip.ipv4_mapped) if ip.ipv4_mapped else None,
    }


@tool(permission="read")
def parse_url(url: str) -> dict[str, Any]:
    """Split a URL into scheme, host, port, path, query parameters and fragment. Use it to read
    or debug a link. To build one with parameters use build_url; to decode % codes use
    url_decode.
    中文：网址解析、URL参数、链接拆分、查询参数。

    Args:
        url: The full URL.
    """
    parts = urllib.parse.urlsplit(url.strip())
    return {
        "scheme": parts.scheme,
        "host": parts.hostname,
        "port": parts.port,
        "path": parts.path,
        "query": urllib.parse.parse_qs(parts.query),
        "fragment": parts.fragment,
        "username": parts.username,
    }


@tool(permission="read")
def build_url(base: str, params: dict[str, str]) -> dict[str, Any]:
    """Add query parameters to a URL, encoding them properly and keeping any already there. Use
    it to build API request or tracking links. To read a URL use parse_url.
    中文：拼接URL、添加查询参数、生成链接。

    Args:
        base: The URL to extend, e.g. https://example.com/search?lang=en.
        params: The parameters to add or replace.
    """
    parts = urllib.parse.urlsplit(base)
    query = dict(urllib.parse.parse_qsl(parts.query))
    query.update(params)
    return {"url": urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))}


@tool(permission="read")
def well_known_port(port_or_service: str) -> dict[str, Any]:
    """Which service usually listens on a TCP/UDP port, or which port a service uses (e.g. Redis
    6379, SSH 22). Use it for firewall and server setup questions.
    中文：常用端口号、端口对应服务、默认端口。

    Args:
        port_or_service: A port number such as 5432 or a service name such as ssh.
    """
    text = port_or_service.strip()
    if text.isdigit():
        port = int(text)
        return {"port": port, "service": _PORTS.get(port, "not a well-known port in the table")}
    port_found = _SERVICES.get(text.lower())
    if port_found is None:
        raise ValueError(f"unknown service {text!r}")
    return {"port": port_found, "service": _PORTS[port_found]}


@tool(permission="read")
def http_status_meaning(code: int) -> dict[str, Any]:
    """What an HTTP status code means (404, 502, 429...) and its class, in plain words. Use it
    for web errors and API responses.
    中文：HTTP状态码、错误码含义、404、502。

    Args:
        code: The status code.
    """
    try:
        status = HTTPStatus(code)
    except ValueError:
        raise ValueError(f"{code} is not a registered HTTP status code") from None
    classes = {
        1: "informational",
        2: "success",
        3: "redirection",
        4: "client error",
        5: "server error",
    }
    return {
        "code": code,
        "phrase": status.phrase,
        "description": status.description,
        "class": classes[code // 100],
    }


@tool(permission="read")
def download_time(
    size: float, size_unit: str, speed: float, speed_unit: str = "Mbps"
) -> dict[str, Any]:
    """How long a file takes to download or upload over a connection of a given speed, handling
    bits versus bytes (Mbps vs MB/s). Use it for 'how long to download 50 GB on 100 Mbps'. For
    byte sizes use human_readable_size.
    中文：下载时间、网速、带宽、传输时间。

    Args:
        size: The file size, e.g. 4.7.
        size_unit: KB, MB, GB or TB (decimal), or KiB, MiB, GiB, TiB.
        speed: The link speed, e.g. 100.
        speed_unit: Kbps, Mbps or Gbps (bits per second), or MB/s (bytes per second).
    """
    sizes = {
        "kb": 1e3,
        "mb": 1e6,
        "gb": 1e9,
        "tb": 1e12,
        "kib": 2**10,
        "mib": 2**20,
        "gib": 2**30,
        "tib": 2**40,
    }
    speeds = {"kbps": 1e3, "mbps": 1e6, "gbps": 1e9, "mb/s": 8e6}
    if size_unit.lower() not in sizes or speed_unit.lower() not in speeds:
        raise ValueError(
            "unknown unit; sizes: KB MB GB TB KiB MiB GiB TiB; speeds: Kbps Mbps Gbps MB/s"
        )
    seconds = size * sizes[size_unit.lower()] * 8 / (speed * speeds[speed_unit.lower()])
    return {"seconds": round(seconds, 1), "minutes": round(seconds / 60, 2)}


_EMAIL = re.compile(
    r"^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+$"
)


@tool(permission="read")
def validate_email_address(address: str) -> dict[str, Any]:
    """Check that an email address is well formed (syntax only; no mail is sent or looked up).
    Use it for sign-up form validation. To find emails in text use extract_emails_and_links.
    中文：邮箱格式校验、邮件地址是否有效、邮箱验证。

    Args:
        address: The email address.
    """
    text = address.strip()
    local = text.split("@", 1)[0]
    problems = []
    if not _EMAIL.match(text):
        problems.append("not of the form name@domain.tld")
    if len(local) > 64:
        problems.append("the part before @ is longer than 64 characters")
    if ".." in text:
        problems.append("two dots in a row")
    return {"valid": not problems, "problems": problems}


@tool(permission="read")
def normalize_mac_address(mac: str, style: str = "colon") -> dict[str, Any]:
    """Rewrite a MAC (hardware) address in colon, hyphen or Cisco dotted form, and tell unicast
    or multicast. Use it for network device configuration.
    中文：MAC地址格式、物理地址、网卡地址。

    Args:
        mac: The MAC address in any common form.
        style: colon (aa:bb:..), hyphen (AA-BB-..) or cisco (aabb.ccdd.eeff).
    """
    digits = re.sub(r"[^0-9a-fA-F]", "", mac).lower()
    if len(digits) != 12:
        raise ValueError("a MAC address has 12 hexadecimal digits")
    pairs = [digits[i : i + 2] for i in range(0, 12, 2)]
    forms = {
        "colon": ":".join(pairs),
        "hyphen": "-".join(pairs).upper(),
        "cisco": ".".join(digits[i : i + 4] for i in range(0, 12, 4)),
    }
    if style not in forms:
        raise ValueError("style is colon, hyphen or cisco")
    first = int(pairs[0], 16)
    return {
        "mac": forms[style],
        "multicast": bool(first & 1),
        "locally_administered": bool(first & 2),
    }

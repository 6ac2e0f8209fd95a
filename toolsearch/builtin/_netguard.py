"""Which addresses the http tools may connect to: public ones only, unless the operator allows more.

A model that can fetch URLs can otherwise reach what only the machine should: `http://127.0.0.1:8080`,
a cloud metadata service at 169.254.169.254, the office network. Host names are resolved and *every*
address checked (a name may resolve to a private address; `2130706433` and `127.1` are loopback in
disguise, which `getaddrinfo` unmasks), and the connection is made to the address that was checked,
so DNS cannot answer differently between the check and the connect (rebinding). Refused: loopback,
link-local, private (RFC 1918, fc00::/7), shared (100.64/10), unspecified, multicast, reserved:
anything that `ipaddress` does not call global. An IPv6 address that carries an IPv4 address is judged
by that IPv4 address too, because the network (or the host's own translator) delivers it there:
IPv4-mapped (`::ffff:127.0.0.1`), IPv4-compatible (`::127.0.0.1`), IPv4-translated
(`::ffff:0:127.0.0.1`), NAT64 (`64:ff9b::7f00:1`, which `ipaddress` calls global), 6to4
(`2002:7f00:1::1`, also "global") and Teredo (server and client). The local-use NAT64 prefix
`64:ff9b:1::/48` (RFC 8215) is refused whole: where its IPv4 address sits is the operator's choice.

`ToolContext.allow_hosts` lets the operator (never the model) open local services: entries are host
names (`localhost`, matched case-insensitively against the URL's host), IP addresses, or networks in
CIDR form (`10.0.0.0/8`). Proxies from the environment are not used: the check must see the real
destination.
"""

from __future__ import annotations

import http.client
import ipaddress
import socket
import urllib.error
import urllib.request
from collections.abc import Iterable
from typing import Any

__all__ = ["AddressRefused", "guarded_opener", "is_public"]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


class AddressRefused(ValueError):
    """The URL's host is (or resolves to) a local or private address that is not allowed."""


_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.ip_network("64:ff9b:1::/48")


def embedded_ipv4(address: ipaddress.IPv6Address) -> list[ipaddress.IPv4Address]:
    """Every IPv4 address that an IPv6 address carries (mapped, compatible, translated, NAT64, 6to4, Teredo)."""
    value = int(address)
    low = ipaddress.IPv4Address(value & 0xFFFFFFFF)
    found: list[ipaddress.IPv4Address] = []
    if address.ipv4_mapped is not None:
        found.append(address.ipv4_mapped)
    if value >> 32 == 0 and value > 1:  # ::a.b.c.d (deprecated IPv4-compatible); :: and ::1 are not
        found.append(low)
    if value >> 32 == 0xFFFF0000:  # ::ffff:0:a.b.c.d (SIIT, RFC 2765)
        found.append(low)
    if address in _NAT64:
        found.append(low)
    if address.sixtofour is not None:
        found.append(address.sixtofour)
    if address.teredo is not None:
        found.extend(address.teredo)
    return found


def is_public(address: Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address):
        if address in _NAT64_LOCAL:
            return False
        if not all(is_public(inner) for inner in embedded_ipv4(address)):
            return False
    return bool(address.is_global) and not address.is_multicast


def _allowed(host: str, address: Address, allow: Iterable[str]) -> bool:
    for entry in allow:
        entry = entry.strip().lower()
        if not entry:
            continue
        if entry == host.lower().strip("[]"):
            return True
        try:
            if address in ipaddress.ip_network(entry, strict=False):
                return True
        except ValueError:
            continue  # a host name entry that is not this host
    return False


def _checked_addresses(host: str, port: int, allow: tuple[str, ...]) -> list[tuple[Any, ...]]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise urllib.error.URLError(exc) from None
    for *_, sockaddr in infos:
        address = ipaddress.ip_address(sockaddr[0].split("%")[0])
        if not is_public(address) and not _allowed(host, address, allow):
            raise AddressRefused(
                f"the host {host!r} is {address}, a local or private address; the http tools only reach "
                "public addresses (an operator can allow local services with ToolContext(allow_hosts=...) "
                "or the CLI's --allow-host)")
    return infos


def _connector(allow: tuple[str, ...]):
    def create_connection(address: tuple[str, int], timeout: Any = socket._GLOBAL_DEFAULT_TIMEOUT,
                          source_address: Any = None) -> socket.socket:
        host, port = address
        last: OSError | None = None
        for family, kind, proto, _, sockaddr in _checked_addresses(host, port, allow):
            sock = socket.socket(family, kind, proto)
            try:
                if timeout is not socket._GLOBAL_DEFAULT_TIMEOUT:
                    sock.settimeout(timeout)
                if source_address:
                    sock.bind(source_address)
                sock.connect(sockaddr)  # the checked address, not a second lookup
                return sock
            except OSError as exc:
                sock.close()
                last = exc
        raise last or OSError(f"cannot connect to {host}")

    return create_connection


def _connection_classes(allow: tuple[str, ...]):
    connect = _connector(allow)

    class GuardedHTTP(http.client.HTTPConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect  # set per instance by http.client too

    class GuardedHTTPS(http.client.HTTPSConnection):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self._create_connection = connect

    return GuardedHTTP, GuardedHTTPS


class _Redirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[no-untyped-def]
        scheme = newurl.split(":", 1)[0].lower()
        if scheme not in ("http", "https"):
            raise AddressRefused(f"{req.full_url} redirects to {newurl!r}; only http and https redirects "
                                 "are followed")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def guarded_opener(allow_hosts: Iterable[str] = ()) -> urllib.request.OpenerDirector:
    """A urllib opener that connects only to allowed addresses and follows only http(s) redirects."""
    http_cls, https_cls = _connection_classes(tuple(allow_hosts))

    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req):  # type: ignore[no-untyped-def]
            return self.do_open(http_cls, req)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req):  # type: ignore[no-untyped-def]
            extra = {"context": self._context}
            if hasattr(self, "_check_hostname"):  # Python 3.11 passes it; 3.12 removed the parameter
                extra["check_hostname"] = self._check_hostname
            return self.do_open(https_cls, req, **extra)

    return urllib.request.build_opener(urllib.request.ProxyHandler({}), HTTPHandler(), HTTPSHandler(),
                                       _Redirects())

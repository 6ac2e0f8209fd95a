"""The `datetime` skill: current time anywhere, time-zone conversion, date arithmetic and differences.

Time zones come from `zoneinfo` (IANA names). Because users say "Tokyo", not "Asia/Tokyo", a zone can
also be named by its city ("new york" -> America/New_York), by "UTC"/"GMT", or as a fixed offset
("+05:30", "UTC-3"). Dates are ISO 8601 ("2024-03-10", "2024-03-10T14:30", with or without an
offset); a naive time is taken to be in the zone the caller names (default UTC). Month and year
arithmetic clamps to the end of the month (Jan 31 + 1 month = Feb 29 in a leap year), the rule
people expect.
"""

from __future__ import annotations

import calendar
import re
from datetime import date, datetime, timedelta, tzinfo
from datetime import timezone as dt_timezone
from functools import lru_cache
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError, available_timezones

__all__ = [
    "convert_timezone",
    "current_time",
    "date_add",
    "date_difference",
    "day_of_week",
    "parse_timezone",
    "timestamp_convert",
]

_OFFSET = re.compile(r"^(?:utc|gmt)?\s*([+-])(\d{1,2})(?::?(\d{2}))?$")


@lru_cache(maxsize=1)
def _cities() -> dict[str, str]:
    out: dict[str, str] = {}
    for name in sorted(available_timezones()):
        if "/" in name and not name.startswith(("Etc/", "SystemV/")):
            out.setdefault(name.rsplit("/", 1)[1].replace("_", " ").lower(), name)
    return out


def parse_timezone(name: str) -> tzinfo:
    """An IANA zone, a city name, UTC/GMT or a fixed offset such as '+09:00'."""
    text = name.strip()
    if text.lower() in ("utc", "gmt", "z", "zulu"):
        return dt_timezone.utc
    match = _OFFSET.match(text.lower())
    if match:
        sign, hours, minutes = match.group(1), int(match.group(2)), int(match.group(3) or 0)
        if hours > 14 or minutes >= 60:
            raise ValueError(f"offset {name!r} is out of range (-14:00..+14:00)")
        delta = timedelta(hours=hours, minutes=minutes)
        return dt_timezone(-delta if sign == "-" else delta)
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError):
        pass
    city = _cities().get(text.replace("_", " ").lower())
    if city:
        return ZoneInfo(city)
    raise ValueError(
        f"unknown time zone {name!r}; use an IANA name such as 'Asia/Tokyo' or 'America/New_York', "
        "a city such as 'Tokyo', 'UTC', or an offset such as '+05:30'"
    )


def _zone_name(tz: tzinfo, moment: datetime) -> str:
    return getattr(tz, "key", None) or tz.tzname(moment) or "UTC"


def _parse(text: str, tz: tzinfo) -> datetime:
    value = text.strip()
    if value.lower() == "now":
        return datetime.now(tz)
    if value.endswith(("Z", "z")):
        value = value[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(
            f"cannot read {text!r} as a date/time; use ISO 8601 such as '2024-03-10' or "
            "'2024-03-10T14:30:00' (optionally with an offset like '+02:00'), or 'now'"
        ) from None
    return moment.replace(tzinfo=tz) if moment.tzinfo is None else moment


def _describe(moment: datetime, tz: tzinfo | None = None) -> dict[str, Any]:
    offset = moment.utcoffset() or timedelta(0)
    minutes = int(offset.total_seconds() // 60)
    return {
        "iso": moment.isoformat(timespec="seconds"),
        "date": moment.date().isoformat(),
        "time": moment.strftime("%H:%M:%S"),
        "weekday": moment.strftime("%A"),
        "timezone": _zone_name(tz or moment.tzinfo or dt_timezone.utc, moment),
        "utc_offset": f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}",
        "unix_timestamp": int(moment.timestamp()),
    }


def current_time(timezone: str = "UTC") -> dict[str, Any]:
    """The current date and time in a time zone."""
    tz = parse_timezone(timezone)
    return _describe(datetime.now(tz), tz)


def convert_timezone(time: str, from_timezone: str = "UTC", to_timezone: str = "UTC") -> dict[str, Any]:
    """Convert a date/time from one zone to another (a time with its own offset ignores from_timezone)."""
    source, target = parse_timezone(from_timezone), parse_timezone(to_timezone)
    moment = _parse(time, source)
    return {"from": _describe(moment, source if moment.tzinfo is source else None),
            "to": _describe(moment.astimezone(target), target)}


def _add_months(moment: datetime, months: int) -> datetime:
    total = moment.month - 1 + months
    year, month = moment.year + total // 12, total % 12 + 1
    if not 1 <= year <= 9999:
        raise ValueError("the resulting date is outside years 1-9999")
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day)


def date_add(
    date: str,
    years: int = 0,
    months: int = 0,
    weeks: float = 0,
    days: float = 0,
    hours: float = 0,
    minutes: float = 0,
    timezone: str = "UTC",
) -> dict[str, Any]:
    """Add (or with negative numbers subtract) an amount of time to a date or date/time."""
    tz = parse_timezone(timezone)
    date_only = re.fullmatch(r"\s*\d{4}-\d{2}-\d{2}\s*", date) is not None
    moment = _parse(date, tz)
    try:
        moment = _add_months(moment, years * 12 + months)
        # Days and weeks are calendar (wall-clock) steps; hours and minutes are elapsed time, so they
        # are added in UTC: 01:30 + 2h on a spring-forward night is 04:30, not 03:30.
        moment = moment + timedelta(weeks=weeks, days=days)
        zone = moment.tzinfo
        moment = (moment.astimezone(dt_timezone.utc) + timedelta(hours=hours, minutes=minutes)).astimezone(zone)
    except OverflowError:
        raise ValueError("the resulting date is outside years 1-9999") from None
    result = _describe(moment)
    if date_only and not (hours or minutes) and float(days).is_integer() and float(weeks).is_integer():
        result = {"date": moment.date().isoformat(), "weekday": moment.strftime("%A")}
    return {"start": date, "result": result}


def date_difference(start: str, end: str, timezone: str = "UTC") -> dict[str, Any]:
    """Time between two dates/times: total days, weeks, hours and a years/months/days breakdown."""
    tz = parse_timezone(timezone)
    a, b = _parse(start, tz), _parse(end, tz)
    sign = 1 if b >= a else -1
    lo, hi = (a, b) if sign == 1 else (b, a)
    delta = hi - lo
    months = (hi.year - lo.year) * 12 + hi.month - lo.month
    if _add_months(lo, months) > hi:
        months -= 1
    rest = hi - _add_months(lo, months)
    return {
        "start": start, "end": end, "direction": "forward" if sign == 1 else "backward",
        "total_days": round(sign * delta.total_seconds() / 86400, 6),
        "total_weeks": round(sign * delta.total_seconds() / 604800, 6),
        "total_hours": round(sign * delta.total_seconds() / 3600, 4),
        "years": months // 12, "months": months % 12, "days": rest.days,
        "hours": rest.seconds // 3600, "minutes": rest.seconds % 3600 // 60,
        "business_days": sign * _business_days(lo.date(), hi.date()),
    }


def _business_days(lo: date, hi: date) -> int:
    """Mon-Fri days in [lo, hi): whole weeks at once, then the remainder."""
    days = (hi - lo).days
    weeks, rest = divmod(days, 7)
    return weeks * 5 + sum((lo.weekday() + i) % 7 < 5 for i in range(rest))


def day_of_week(date: str) -> dict[str, Any]:
    """The weekday of a date, with its ISO week number and day of the year."""
    moment = _parse(date, dt_timezone.utc)
    iso = moment.isocalendar()
    return {"date": moment.date().isoformat(), "weekday": moment.strftime("%A"), "iso_week": iso.week,
            "day_of_year": moment.timetuple().tm_yday,
            "is_leap_year": calendar.isleap(moment.year)}


def timestamp_convert(
    timestamp: float | None = None, date: str | None = None, timezone: str = "UTC"
) -> dict[str, Any]:
    """Unix timestamp (seconds; milliseconds are detected) to a date, or a date to a timestamp."""
    tz = parse_timezone(timezone)
    if (timestamp is None) == (date is None):
        raise ValueError("give exactly one of 'timestamp' (to get a date) or 'date' (to get a timestamp)")
    if timestamp is not None:
        seconds = timestamp / 1000 if abs(timestamp) > 1e11 else timestamp  # ms since 1973 look like this
        try:
            moment = datetime.fromtimestamp(seconds, tz)
        except (OverflowError, OSError, ValueError):
            raise ValueError(f"timestamp {timestamp} is out of range") from None
        return {"timestamp": timestamp, "seconds": seconds, **_describe(moment, tz)}
    moment = _parse(date or "", tz)
    return {"date": date, "unix_timestamp": moment.timestamp(),
            "unix_timestamp_ms": int(moment.timestamp() * 1000), **_describe(moment, tz)}

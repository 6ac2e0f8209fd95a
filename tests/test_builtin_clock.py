"""The datetime skill with fixed inputs and fixed zones (no dependence on today's date)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from toolsearch.builtin import clock


def test_parse_timezone_accepts_iana_city_utc_and_offsets() -> None:
    assert clock.parse_timezone("Asia/Tokyo").key == "Asia/Tokyo"  # type: ignore[attr-defined]
    assert clock.parse_timezone("tokyo").key == "Asia/Tokyo"  # type: ignore[attr-defined]
    assert clock.parse_timezone("New York").key == "America/New_York"  # type: ignore[attr-defined]
    assert clock.parse_timezone("UTC") is timezone.utc
    moment = datetime(2024, 1, 1)
    assert clock.parse_timezone("+05:30").utcoffset(moment).total_seconds() == 5.5 * 3600  # type: ignore[union-attr]
    assert clock.parse_timezone("UTC-3").utcoffset(moment).total_seconds() == -3 * 3600  # type: ignore[union-attr]
    with pytest.raises(ValueError, match="unknown time zone 'Atlantis'"):
        clock.parse_timezone("Atlantis")
    with pytest.raises(ValueError, match="out of range"):
        clock.parse_timezone("+15:00")


def test_convert_timezone_fixed_zones_and_dst() -> None:
    out = clock.convert_timezone("2024-05-01T15:00", "UTC", "Asia/Tokyo")
    assert out["to"]["iso"] == "2024-05-02T00:00:00+09:00" and out["to"]["weekday"] == "Thursday"
    winter = clock.convert_timezone("2024-01-15T12:00", "Europe/Berlin", "America/New_York")
    summer = clock.convert_timezone("2024-07-15T12:00", "Europe/Berlin", "America/New_York")
    assert winter["to"]["time"] == "06:00:00" and summer["to"]["time"] == "06:00:00"
    assert winter["to"]["utc_offset"] == "-05:00" and summer["to"]["utc_offset"] == "-04:00"
    # an explicit offset in the time wins over from_timezone
    assert clock.convert_timezone("2024-05-01T15:00+02:00", "Asia/Tokyo", "UTC")["to"]["time"] == "13:00:00"
    assert clock.convert_timezone("2024-05-01T15:00Z", "UTC", "+01:00")["to"]["time"] == "16:00:00"
    with pytest.raises(ValueError, match="ISO 8601"):
        clock.convert_timezone("next tuesday", "UTC", "UTC")


def test_current_time_is_now_in_the_zone() -> None:
    out = clock.current_time("Asia/Kolkata")
    assert out["utc_offset"] == "+05:30" and out["timezone"] == "Asia/Kolkata"
    assert abs(out["unix_timestamp"] - datetime.now(timezone.utc).timestamp()) < 5


def test_date_add_months_clamp_and_plain_dates() -> None:
    assert clock.date_add("2024-01-31", months=1)["result"] == {"date": "2024-02-29", "weekday": "Thursday"}
    assert clock.date_add("2023-01-31", months=1)["result"]["date"] == "2023-02-28"
    assert clock.date_add("2024-01-15", days=30)["result"]["date"] == "2024-02-14"
    assert clock.date_add("2024-03-01", weeks=-1)["result"]["date"] == "2024-02-23"
    assert clock.date_add("2024-02-29", years=1)["result"]["date"] == "2025-02-28"
    timed = clock.date_add("2024-03-10T01:30", hours=2, timezone="America/New_York")["result"]
    assert timed["iso"] == "2024-03-10T04:30:00-04:00"  # 2 elapsed hours across the DST jump
    with pytest.raises(ValueError, match="years 1-9999"):
        clock.date_add("9999-12-01", months=1)


def test_date_difference() -> None:
    out = clock.date_difference("2024-01-01", "2024-03-15")
    assert out["total_days"] == 74 and (out["years"], out["months"], out["days"]) == (0, 2, 14)
    assert out["business_days"] == 54  # Mon Jan 1 .. Thu Mar 14
    back = clock.date_difference("2024-03-15", "2024-01-01")
    assert back["total_days"] == -74 and back["direction"] == "backward"
    age = clock.date_difference("1990-06-01", "2024-05-31")
    assert (age["years"], age["months"], age["days"]) == (33, 11, 30)


def test_day_of_week_and_timestamps() -> None:
    out = clock.day_of_week("2025-12-25")
    assert out["weekday"] == "Thursday" and out["iso_week"] == 52 and out["day_of_year"] == 359
    assert clock.day_of_week("2024-02-29")["is_leap_year"] is True
    assert clock.timestamp_convert(timestamp=1_700_000_000)["iso"] == "2023-11-14T22:13:20+00:00"
    assert clock.timestamp_convert(timestamp=1_700_000_000_000)["date"] == "2023-11-14"  # milliseconds
    assert clock.timestamp_convert(date="2024-01-01")["unix_timestamp"] == 1_704_067_200
    assert clock.timestamp_convert(date="2024-01-01T09:00", timezone="Asia/Tokyo")["unix_timestamp"] == 1_704_067_200
    with pytest.raises(ValueError, match="exactly one"):
        clock.timestamp_convert()

"""The math skill: a safe calculator (no eval, no names, no DoS), statistics, units and friends."""

from __future__ import annotations

import math
import time

import pytest

from toolsearch.builtin import mathx
from toolsearch.builtin.units import UNITS, _TABLE, convert_units


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("17 * 23 + 4", 395),
        ("(3 + 4) * 2^10 / 7", 1024),
        ("2 ** 64", 2**64),
        ("sqrt(16) + abs(-2)", 6),
        ("round(pi, 4)", 3.1416),
        ("log(100, 10)", 2),
        ("factorial(20)", math.factorial(20)),
        ("7 // 2 + 7 % 2", 4),
        ("-(-3)", 3),
        ("max(1, 5, 3) - min(4, 2)", 3),
        ("10 × 3 ÷ 4", 7.5),
    ],
)
def test_calculate(expression: str, expected: float) -> None:
    assert mathx.calculate(expression)["result"] == pytest.approx(expected)


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "(1).__class__",
        "().__class__.__bases__[0]",
        "open('x')",
        "x + 1",
        "lambda: 1",
        "[1, 2][0]",
        "'a' * 3",
        "abs(x=1)",
        "math.sqrt(4)",
    ],
)
def test_calculate_refuses_anything_but_arithmetic(expression: str) -> None:
    with pytest.raises(ValueError):
        mathx.calculate(expression)


@pytest.mark.parametrize("expression", ["9**9**9", "2**10**10", "10**5000", "(10**1000)*(10**1000)", "factorial(100000)"])
def test_calculate_refuses_huge_results_quickly(expression: str) -> None:
    started = time.monotonic()
    with pytest.raises(ValueError, match="too large|bits|limited"):
        mathx.calculate(expression)
    assert time.monotonic() - started < 0.5


def test_calculate_errors_are_clear() -> None:
    with pytest.raises(ValueError, match="division by zero"):
        mathx.calculate("1/0")
    with pytest.raises(ValueError, match="cannot parse"):
        mathx.calculate("2 +")
    with pytest.raises(ValueError, match="unknown function 'system'"):
        mathx.calculate("system(1)")
    with pytest.raises(ValueError, match="domain"):
        mathx.calculate("sqrt(-1)")
    with pytest.raises(ValueError, match="overflows"):
        mathx.calculate("10.0 ** 400")


def test_statistics() -> None:
    out = mathx.statistics([2, 4, 4, 4, 5, 5, 7, 9])
    assert out["mean"] == 5 and out["median"] == 4.5 and out["mode"] == [4.0]
    assert out["stdev_population"] == 2 and out["range"] == 7 and out["count"] == 8
    assert mathx.statistics([3])["mean"] == 3
    with pytest.raises(ValueError):
        mathx.statistics([])


def test_percentage() -> None:
    assert mathx.percentage(15, of=80)["percent_of"] == 12
    assert mathx.percentage(30, of=120)["value_as_percent_of"] == 25
    assert mathx.percentage(50, to=65)["percent_change"] == 30
    with pytest.raises(ValueError, match="give 'of'"):
        mathx.percentage(5)


def test_number_base_primes_random() -> None:
    assert mathx.convert_number_base("255", 10, 2)["result"] == "11111111"
    assert mathx.convert_number_base("0xff", 16, 10)["result"] == "255"
    assert mathx.convert_number_base("-1010", 2, 16)["result"] == "-a"
    with pytest.raises(ValueError, match="not an integer in base 2"):
        mathx.convert_number_base("102", 2, 10)
    assert mathx.prime_factors(360)["factors"] == [2, 2, 2, 3, 3, 5]
    assert mathx.prime_factors(97)["is_prime"] is True
    a = mathx.random_number(1, 6, count=20, seed=7)["numbers"]
    assert a == mathx.random_number(1, 6, count=20, seed=7)["numbers"] and set(a) <= set(range(1, 7))
    with pytest.raises(ValueError, match="no integer"):
        mathx.random_number(1.2, 1.8)


@pytest.mark.parametrize(
    ("value", "src", "dst", "expected"),
    [
        (10, "miles", "km", 16.09344),
        (70, "kg", "lb", 154.323583529),
        (72, "F", "C", 22.2222222222),
        (0, "celsius", "kelvin", 273.15),
        (5, "gallons", "liters", 18.92705892),
        (1, "GiB", "MB", 1073.741824),
        (60, "mph", "km/h", 96.56064),
        (1, "kWh", "kcal", 860.420650096),
        (2, "km²", "ha", 200),
    ],
)
def test_convert_units(value: float, src: str, dst: str, expected: float) -> None:
    assert convert_units(value, src, dst)["result"] == pytest.approx(expected)


def test_convert_units_errors_and_table_consistency() -> None:
    with pytest.raises(ValueError, match="cannot convert length .* to mass"):
        convert_units(1, "km", "kg")
    with pytest.raises(ValueError, match="unknown unit 'furlongs'"):
        convert_units(1, "furlongs", "m")
    with pytest.raises(ValueError, match="temperature"):
        convert_units(1, "C", "m")
    aliases = [a for units in _TABLE.values() for names in units for a in names]
    assert len(aliases) == len(set(aliases)) == len(UNITS), "a unit spelling is listed twice"

"""Unit conversion for the `math` skill (`convert_units`): length, mass, volume, area, time, speed,
data size, energy, pressure and temperature.

Each linear unit is a factor to its dimension's base unit (metre, kilogram, litre, ...), listed once
with every spelling a user or model is likely to write ("mi", "mile", "miles"); temperature is affine
and handled separately. Converting between dimensions is an error that names both dimensions.
"""

from __future__ import annotations

from typing import Any

__all__ = ["UNITS", "convert_units"]

_TABLE: dict[str, dict[tuple[str, ...], float]] = {
    "length": {
        ("m", "meter", "meters", "metre", "metres"): 1.0,
        ("km", "kilometer", "kilometers", "kilometre", "kilometres"): 1000.0,
        ("cm", "centimeter", "centimeters", "centimetre", "centimetres"): 0.01,
        ("mm", "millimeter", "millimeters", "millimetre", "millimetres"): 0.001,
        ("um", "micrometer", "micrometers", "micron", "microns"): 1e-6,
        ("nm", "nanometer", "nanometers"): 1e-9,
        ("mi", "mile", "miles"): 1609.344,
        ("yd", "yard", "yards"): 0.9144,
        ("ft", "foot", "feet"): 0.3048,
        ("in", "inch", "inches"): 0.0254,
        ("nmi", "nautical mile", "nautical miles"): 1852.0,
        ("ly", "light year", "light years", "lightyear"): 9.4607304725808e15,
        ("au", "astronomical unit"): 1.495978707e11,
    },
    "mass": {
        ("kg", "kilogram", "kilograms", "kilo", "kilos"): 1.0,
        ("g", "gram", "grams"): 0.001,
        ("mg", "milligram", "milligrams"): 1e-6,
        ("t", "tonne", "tonnes", "metric ton", "metric tons"): 1000.0,
        ("lb", "lbs", "pound", "pounds"): 0.45359237,
        ("oz", "ounce", "ounces"): 0.028349523125,
        ("st", "stone", "stones"): 6.35029318,
        ("ton", "tons", "short ton", "short tons"): 907.18474,
    },
    "volume": {
        ("l", "liter", "liters", "litre", "litres"): 1.0,
        ("ml", "milliliter", "milliliters", "millilitre", "millilitres"): 0.001,
        ("m3", "cubic meter", "cubic meters", "cubic metre"): 1000.0,
        ("cm3", "cc", "cubic centimeter", "cubic centimeters"): 0.001,
        ("gal", "gallon", "gallons", "us gallon", "us gallons"): 3.785411784,
        ("imperial gallon", "imperial gallons", "uk gallon"): 4.54609,
        ("qt", "quart", "quarts"): 0.946352946,
        ("pt", "pint", "pints"): 0.473176473,
        ("cup", "cups"): 0.2365882365,
        ("fl oz", "floz", "fluid ounce", "fluid ounces"): 0.0295735295625,
        ("tbsp", "tablespoon", "tablespoons"): 0.01478676478125,
        ("tsp", "teaspoon", "teaspoons"): 0.00492892159375,
    },
    "area": {
        ("m2", "sq m", "square meter", "square meters", "square metre", "square metres"): 1.0,
        ("km2", "sq km", "square kilometer", "square kilometers"): 1e6,
        ("cm2", "square centimeter", "square centimeters"): 1e-4,
        ("ha", "hectare", "hectares"): 1e4,
        ("acre", "acres"): 4046.8564224,
        ("ft2", "sq ft", "square foot", "square feet"): 0.09290304,
        ("in2", "sq in", "square inch", "square inches"): 0.00064516,
        ("mi2", "sq mi", "square mile", "square miles"): 2589988.110336,
    },
    "time": {
        ("s", "sec", "secs", "second", "seconds"): 1.0,
        ("ms", "millisecond", "milliseconds"): 0.001,
        ("min", "mins", "minute", "minutes"): 60.0,
        ("h", "hr", "hrs", "hour", "hours"): 3600.0,
        ("d", "day", "days"): 86400.0,
        ("wk", "week", "weeks"): 604800.0,
        ("yr", "year", "years"): 31557600.0,  # Julian year, 365.25 days
    },
    "speed": {
        ("m/s", "mps", "meters per second", "metres per second"): 1.0,
        ("km/h", "kmh", "kph", "kilometers per hour", "kilometres per hour"): 1000 / 3600,
        ("mph", "mi/h", "miles per hour"): 1609.344 / 3600,
        ("kn", "kt", "knot", "knots"): 1852 / 3600,
        ("ft/s", "fps", "feet per second"): 0.3048,
    },
    "data": {
        ("b", "byte", "bytes"): 1.0,
        ("bit", "bits"): 0.125,
        ("kb", "kilobyte", "kilobytes"): 1e3,
        ("mb", "megabyte", "megabytes"): 1e6,
        ("gb", "gigabyte", "gigabytes"): 1e9,
        ("tb", "terabyte", "terabytes"): 1e12,
        ("kib", "kibibyte", "kibibytes"): 1024.0,
        ("mib", "mebibyte", "mebibytes"): 1024.0**2,
        ("gib", "gibibyte", "gibibytes"): 1024.0**3,
        ("tib", "tebibyte", "tebibytes"): 1024.0**4,
    },
    "energy": {
        ("j", "joule", "joules"): 1.0,
        ("kj", "kilojoule", "kilojoules"): 1000.0,
        ("cal", "calorie", "calories"): 4.184,
        ("kcal", "kilocalorie", "kilocalories"): 4184.0,
        ("wh", "watt hour", "watt hours"): 3600.0,
        ("kwh", "kilowatt hour", "kilowatt hours"): 3.6e6,
        ("btu",): 1055.05585262,
        ("ev", "electronvolt", "electronvolts"): 1.602176634e-19,
    },
    "pressure": {
        ("pa", "pascal", "pascals"): 1.0,
        ("kpa", "kilopascal", "kilopascals"): 1000.0,
        ("bar",): 1e5,
        ("atm", "atmosphere", "atmospheres"): 101325.0,
        ("psi",): 6894.757293168,
        ("mmhg",): 133.322387415,
    },
}

UNITS: dict[str, tuple[str, float]] = {
    alias: (dimension, factor)
    for dimension, units in _TABLE.items()
    for aliases, factor in units.items()
    for alias in aliases
}
_TEMPERATURE = {
    "c": "C", "celsius": "C", "°c": "C", "degc": "C",
    "f": "F", "fahrenheit": "F", "°f": "F", "degf": "F",
    "k": "K", "kelvin": "K",
}


def _key(unit: str) -> str:
    return " ".join(unit.strip().lower().replace("²", "2").replace("³", "3").split())


def _to_kelvin(value: float, scale: str) -> float:
    return {"C": value + 273.15, "F": (value - 32) * 5 / 9 + 273.15, "K": value}[scale]


def _from_kelvin(value: float, scale: str) -> float:
    return {"C": value - 273.15, "F": (value - 273.15) * 9 / 5 + 32, "K": value}[scale]


def convert_units(value: float, from_unit: str, to_unit: str) -> dict[str, Any]:
    """Convert `value` from one unit to another of the same kind (e.g. 10 miles -> km, 72 F -> C)."""
    src, dst = _key(from_unit), _key(to_unit)
    if src in _TEMPERATURE or dst in _TEMPERATURE:
        if not (src in _TEMPERATURE and dst in _TEMPERATURE):
            raise ValueError(f"cannot convert between a temperature and {from_unit if dst in _TEMPERATURE else to_unit!r}")
        result = _from_kelvin(_to_kelvin(value, _TEMPERATURE[src]), _TEMPERATURE[dst])
        return {"value": value, "from": from_unit, "to": to_unit, "result": round(result, 10), "kind": "temperature"}
    for unit, given in ((src, from_unit), (dst, to_unit)):
        if unit not in UNITS:
            raise ValueError(
                f"unknown unit {given!r}; supported kinds: {', '.join(_TABLE)}, temperature "
                "(e.g. km, mi, lb, kg, l, gal, mph, GB, kWh, psi, C, F)"
            )
    (dim_a, fa), (dim_b, fb) = UNITS[src], UNITS[dst]
    if dim_a != dim_b:
        raise ValueError(f"cannot convert {dim_a} ({from_unit}) to {dim_b} ({to_unit})")
    result = value * fa / fb
    return {"value": value, "from": from_unit, "to": to_unit, "result": float(f"{result:.12g}"), "kind": dim_a}

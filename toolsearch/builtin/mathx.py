"""The `math` skill: a calculator, statistics, percentages, number bases, primes and random numbers.

`calculate` never calls `eval`: it parses the expression with `ast` and walks only the node types a
calculator needs (numbers, + - * / // % **, unary signs, comparisons are not needed, calls of a fixed
set of math functions, the constants pi/e/tau/inf). Names, attributes, subscripts, lambdas and strings
are rejected, so there is no path to Python objects. Size guards stop the cheap denial-of-service
tricks: `9**9**9` is refused before it is computed (the result's size is estimated from bit lengths),
integers are capped at `MAX_INT_BITS`, and factorial/comb arguments are bounded. Big-integer work
holds the GIL (every other call and session waits), so the operands that make it slow are bounded too:
`round(5, -15000000)` built 10**15000000 (15.6 s) and is now answered without it, expressions nest at
most `MAX_DEPTH` deep (a deeper one raised RecursionError), a base conversion reads at most
`MAX_INT_BITS` bits (the digit loop is quadratic), and `prime_factors` uses Pollard's rho, so a
15-digit prime takes milliseconds instead of 4 s of trial division.
Unit conversion lives in `units.py`.
"""

from __future__ import annotations

import ast
import math
import operator
import random
import statistics as stats
from typing import Any, Callable

__all__ = [
    "calculate",
    "convert_number_base",
    "percentage",
    "prime_factors",
    "random_number",
    "statistics",
]

MAX_EXPRESSION = 2_000
MAX_INT_BITS = 4_096  # ~1233 decimal digits: ample for a calculator, cheap to compute with
MAX_DIGITS = 1_300  # decimal digits past any MAX_INT_BITS integer: round() beyond this changes nothing
MAX_DEPTH = 200  # nesting of the expression tree (CPython's parser stops at 200 parentheses too)

_BIN: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _bounded(limit: int) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        def guarded(*args: Any) -> Any:
            if any(isinstance(a, (int, float)) and abs(a) > limit for a in args):
                raise ValueError(f"{fn.__name__}() arguments are limited to {limit} here")
            return fn(*args)
        guarded.__name__ = fn.__name__
        return guarded
    return wrap


def _round(value: Any, ndigits: Any = None) -> Any:
    """round(), without building 10**|ndigits| for a huge ndigits (the result is already known)."""
    if ndigits is None or not isinstance(ndigits, int) or abs(ndigits) <= MAX_DIGITS:
        return round(value, ndigits)
    if ndigits > 0:
        return round(value, MAX_DIGITS)  # keeps every digit an int or float here can have
    return type(value)(0) if isinstance(value, (int, float)) else round(value, ndigits)


_FUNCTIONS: dict[str, Callable[..., Any]] = {
    name: getattr(math, name)
    for name in (
        "sqrt", "cbrt", "exp", "log", "log10", "log2", "sin", "cos", "tan", "asin", "acos", "atan",
        "atan2", "sinh", "cosh", "tanh", "degrees", "radians", "floor", "ceil", "trunc", "hypot",
        "gcd", "lcm", "isqrt", "fabs", "copysign",
    )
} | {
    "abs": abs, "round": _round, "min": min, "max": max, "sum": lambda *a: math.fsum(a),
    "factorial": _bounded(1000)(math.factorial), "comb": _bounded(10_000)(math.comb),
    "perm": _bounded(10_000)(math.perm), "ln": math.log,
}
_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf}


def _check_size(value: Any) -> Any:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise ValueError(f"the result has more than {MAX_INT_BITS} bits; this calculator stops there")
    return value


def _power(base: Any, exponent: Any) -> Any:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 and abs(base) > 1:
        # Estimate before computing: 9**9**9 would take minutes and gigabytes.
        if (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS:
            raise ValueError(f"{base}**{exponent} is too large (more than {MAX_INT_BITS} bits)")
    if isinstance(base, float) or isinstance(exponent, float):
        try:
            return math.pow(base, exponent)
        except OverflowError:
            raise ValueError(f"{base}**{exponent} overflows a float") from None
    return base**exponent


def _eval(node: ast.AST, depth: int = 0) -> Any:
    if depth > MAX_DEPTH:
        raise ValueError(f"the expression nests more than {MAX_DEPTH} operations deep; split it into steps")
    depth += 1
    if isinstance(node, ast.Expression):
        return _eval(node.body, depth)
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BIN:
        left, right = _eval(node.left, depth), _eval(node.right, depth)
        if isinstance(node.op, ast.Pow):
            return _check_size(_power(left, right))
        if isinstance(node.op, ast.Mult) and isinstance(left, int) and isinstance(right, int):
            if left.bit_length() + right.bit_length() > MAX_INT_BITS + 1:
                raise ValueError(f"the result has more than {MAX_INT_BITS} bits; this calculator stops there")
        return _check_size(_BIN[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand, depth))
    if isinstance(node, ast.Name):
        if node.id in _CONSTANTS:
            return _CONSTANTS[node.id]
        raise ValueError(f"unknown name {node.id!r}; known constants: {', '.join(_CONSTANTS)}")
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        fn = _FUNCTIONS.get(node.func.id)
        if fn is None:
            raise ValueError(f"unknown function {node.func.id!r}; available: {', '.join(sorted(_FUNCTIONS))}")
        return _check_size(fn(*[_eval(a, depth) for a in node.args]))
    raise ValueError(
        f"'{ast.unparse(node)}' is not allowed: only numbers, + - * / // % ** ^, parentheses, "
        "math functions and the constants pi, e, tau are supported"
    )


def calculate(expression: str) -> dict[str, Any]:
    """Evaluate an arithmetic expression safely, e.g. 'sqrt(2) * (3 + 4)^2 / 7'."""
    # Calculators write 2^10 for a power (xor is never what a user means). Rewriting the text, not
    # the tree, keeps the precedence right: Python's ^ binds looser than * and /.
    text = expression.strip().replace("×", "*").replace("÷", "/").replace("^", "**")
    if not text:
        raise ValueError("expression must not be empty")
    if len(text) > MAX_EXPRESSION:
        raise ValueError(f"expression is longer than {MAX_EXPRESSION} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"cannot parse {expression!r}: {exc.msg} (at column {exc.offset})") from None
    try:
        value = _eval(tree)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except (OverflowError, TypeError) as exc:
        raise ValueError(f"cannot evaluate {expression!r}: {exc}") from None
    except ValueError as exc:
        raise ValueError(str(exc) if "math domain" not in str(exc) else f"math domain error in {expression!r}") from None
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        value = int(value)
    return {"expression": expression, "result": value}


def statistics(numbers: list[float]) -> dict[str, Any]:
    """Count, sum, mean, median, mode, min/max, range, quartiles, standard deviation and variance."""
    if not numbers:
        raise ValueError("numbers must contain at least one value")
    data = sorted(float(n) for n in numbers)
    out: dict[str, Any] = {
        "count": len(data), "sum": math.fsum(data), "mean": stats.fmean(data),
        "median": stats.median(data), "mode": stats.multimode(data)[:5],
        "min": data[0], "max": data[-1], "range": data[-1] - data[0],
    }
    if len(data) >= 2:
        q1, q2, q3 = stats.quantiles(data, n=4, method="inclusive")
        out |= {
            "q1": q1, "q3": q3, "stdev_sample": stats.stdev(data), "stdev_population": stats.pstdev(data),
            "variance_sample": stats.variance(data), "variance_population": stats.pvariance(data),
        }
    return {k: (round(v, 12) if isinstance(v, float) else v) for k, v in out.items()}


def percentage(value: float, of: float | None = None, to: float | None = None) -> dict[str, Any]:
    """`value` percent of `of`; what percent `value` is of `of` (with mode); or change from value to `to`."""
    if to is not None:
        if value == 0:
            raise ValueError("percentage change from 0 is undefined")
        change = (to - value) / abs(value) * 100
        return {"from": value, "to": to, "percent_change": round(change, 10), "difference": to - value}
    if of is None:
        raise ValueError("give 'of' (what is value% of it / what percent is value of it) or 'to' (change)")
    out: dict[str, Any] = {"percent_of": round(value / 100 * of, 10)}
    if of != 0:
        out["value_as_percent_of"] = round(value / of * 100, 10)
    return {"value": value, "of": of, **out}


def convert_number_base(value: str, from_base: int = 10, to_base: int = 2) -> dict[str, Any]:
    """Convert an integer between bases 2-36 (prefixes 0x, 0b, 0o are understood)."""
    for base in (from_base, to_base):
        if not 2 <= base <= 36:
            raise ValueError(f"bases must be between 2 and 36, got {base}")
    text = value.strip().lower().replace("_", "")
    if len(text) > MAX_INT_BITS + 3:  # base 2 needs the most digits; the check below is exact
        raise ValueError(f"the value has more than {MAX_INT_BITS} digits; this tool converts integers of up "
                         f"to {MAX_INT_BITS} bits")
    try:
        number = int(text, from_base if not text.lstrip("-").startswith(("0x", "0b", "0o")) else 0)
    except ValueError:
        raise ValueError(f"{value[:100]!r} is not an integer in base {from_base}") from None
    if number.bit_length() > MAX_INT_BITS:
        raise ValueError(f"the value has more than {MAX_INT_BITS} bits; this tool converts integers of up to "
                         f"{MAX_INT_BITS} bits")
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    n, out = abs(number), ""
    while True:
        n, r = divmod(n, to_base)
        out = digits[r] + out
        if n == 0:
            break
    return {"value": value, "decimal": number, "base": to_base, "result": ("-" if number < 0 else "") + out}


def _is_prime(n: int) -> bool:
    """Deterministic Miller-Rabin for n < 3.3e24 (these bases are proven enough)."""
    if n < 2:
        return False
    bases = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)
    if n in bases:
        return True
    if any(n % b == 0 for b in bases):
        return False
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for b in bases:
        x = pow(b, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _factor(n: int) -> int:
    """A non-trivial factor of a composite n (Pollard's rho, Brent's variant; n is odd and small here)."""
    for c in range(1, n):
        x = y = 2
        d = 1
        while d == 1:
            x = (x * x + c) % n
            y = (y * y + c) % n
            y = (y * y + c) % n
            d = math.gcd(abs(x - y), n)
        if d != n:
            return d
    raise ArithmeticError(f"no factor found for {n}")  # unreachable for a composite n


def prime_factors(number: int) -> dict[str, Any]:
    """Prime factorisation (numbers up to 10**15): small primes by division, the rest by Pollard's rho."""
    if not 2 <= number <= 10**15:
        raise ValueError("number must be between 2 and 10**15")
    factors, n = [], number
    for d in range(2, 1000):
        while n % d == 0:
            factors.append(d)
            n //= d
    pending = [n] if n > 1 else []
    while pending:
        n = pending.pop()
        if _is_prime(n):
            factors.append(n)
        else:
            d = _factor(n)
            pending += [d, n // d]
    factors.sort()
    return {"number": number, "factors": factors, "is_prime": factors == [number]}


def random_number(
    minimum: float = 1, maximum: float = 100, count: int = 1, integer: bool = True, seed: int | None = None
) -> dict[str, Any]:
    """Random numbers in [minimum, maximum]; integers by default; `seed` makes them reproducible."""
    if minimum > maximum:
        raise ValueError("minimum must not be greater than maximum")
    if not 1 <= count <= 1000:
        raise ValueError("count must be between 1 and 1000")
    rng = random.Random(seed) if seed is not None else random.SystemRandom()
    if integer:
        lo, hi = math.ceil(minimum), math.floor(maximum)
        if lo > hi:
            raise ValueError(f"there is no integer between {minimum} and {maximum}")
        values: list[float] = [rng.randint(lo, hi) for _ in range(count)]
    else:
        values = [rng.uniform(minimum, maximum) for _ in range(count)]
    return {"numbers": values}

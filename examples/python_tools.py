"""Your own tools in plain Python: search them and run one, with no model and no API key."""
from typing import Annotated

from pydantic import Field

import toolsearch


@toolsearch.tool
def convert_currency(amount: float, currency: Annotated[str, Field(description="ISO code")] = "EUR") -> dict:
    """Convert US dollars to another currency at a fixed demo rate."""
    rates = {"EUR": 0.92, "GBP": 0.79, "JPY": 151.0}
    return {"amount": round(amount * rates[currency.upper()], 2), "currency": currency.upper()}


@toolsearch.tool
def tip(bill: float, percent: float = 15) -> float:
    """Work out the tip for a restaurant bill."""
    return round(bill * percent / 100, 2)


skill = toolsearch.skill_from_functions("money", [convert_currency, tip], description="Money helpers")
searcher = toolsearch.Searcher([skill])
hits = searcher.search("how much is 20 dollars in euros")
print([hit.name for hit in hits])  # convert_currency first

with toolsearch.Executor([skill]) as executor:
    print(executor.run(hits[0].name, {"amount": 20, "currency": "EUR"}).text)

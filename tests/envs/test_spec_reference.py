"""envs.spec_reference: docs/market.md is MarketSpec's field reference, regenerated and
compared."""

import dataclasses
from pathlib import Path

from tradearena.envs.spec import MarketSpec
from tradearena.envs.spec_reference import field_docs, market_reference, write_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "market.md"


def test_docs_market_md_is_the_fields_reference():
    """docs/market.md is what the field docstrings generate now (`make docs` writes it)."""
    assert DOCS.read_text() == market_reference()


def test_every_field_has_a_docstring_and_a_row(tmp_path):
    """Each of the 34 fields has its docstring and its row, in the dataclass's order; rows by
    hand: a task-defaulted field and a tuple default."""
    names = [f.name for f in dataclasses.fields(MarketSpec)]
    assert len(names) == 34 and list(field_docs()) == names
    text = write_reference(tmp_path / "market.md").read_text()
    assert text == market_reference()
    rows = [line.split(" | ")[0].removeprefix("| ") for line in text.splitlines()[10:]]
    assert rows == [f"`{name}`" for name in names]
    assert "| `step_seconds` | float | `60.0` | Seconds between decisions. |" in text
    assert "| `windows` | tuple[int, ...] | `[1, 5, 15]` | Return windows" in text

"""evaluation.reports.reference: docs/config.md is the schema's reference, regenerated and
compared."""

from pathlib import Path

from tradearena.evaluation.experiment.schema import TOP
from tradearena.evaluation.reports.reference import config_reference, write_reference

DOCS = Path(__file__).resolve().parents[2] / "docs" / "config.md"


def _keys(schema: dict, prefix: str = "") -> dict:
    """Every key of ``schema`` and of its tables, dotted -> Field."""
    out = {}
    for key, field in schema.items():
        out[prefix + key] = field
        if isinstance(field.default, dict):
            out |= _keys(field.default, f"{prefix}{key}.")
    return out


def test_docs_config_md_is_the_schemas_reference():
    """docs/config.md is what the schema generates now (`make docs` writes it)."""
    assert DOCS.read_text() == config_reference()


def test_every_table_and_key_has_a_meaning_and_a_row():
    """Every key of every table says what it means, and has its row under its table."""
    keys = _keys(TOP)
    assert len(keys) == 79  # 4 keys and 9 tables at the top, 66 keys below them
    assert [k for k, field in keys.items() if not field.doc] == []
    text = config_reference()
    for key, field in keys.items():
        if isinstance(field.default, dict):
            title = f"[[{key}]]" if field.type is list else f"[{key}]"
            assert f"## `{title}`\n\n{field.doc[0].upper()}{field.doc[1:]}." in text
        else:
            assert f"| `{key.rpartition('.')[2]}` |" in text


def test_rows_give_type_default_rule_and_meaning(tmp_path):
    """Rows by hand: a required string, an integer with its rule, a number, an array, a
    market field the task defaults; `write_reference` writes the same text."""
    text = write_reference(tmp_path / "config.md").read_text()
    assert text == config_reference()
    rows = set(text.splitlines())
    assert (
        "| `kind` | string | required | one of ['compare', 'psro', 'robustness', 'tournament'] "
        "| what the experiment runs |"
    ) in rows
    assert (
        "| `seeds` | integer | `3` | in [1, 10,000] | repetitions, each one market randomness |"
        in rows
    )
    assert "| `step_seconds` | number | `60.0` | - | seconds between decisions |" in rows
    assert (
        "| `windows` | array | `[1, 5, 15]` | - | return windows of the features, in steps |"
        in rows
    )
    assert (
        "| `episodes` | integer | `10` | in [0, 10,000,000] | per agent (0: agents that do not "
        "learn) |" in rows
    )


def test_a_key_of_several_types_names_each():
    """A number (an integer is one too) or a table: ``order_latency`` takes 0.002 and a model
    table; ``seeds`` only integers."""
    lines = config_reference().splitlines()
    rows = {line.split(" | ")[0]: line.split(" | ")[1] for line in lines if line.startswith("| `")}
    assert rows["| `order_latency`"] == "number or table"
    assert rows["| `feed_latency`"] == "number" and rows["| `seeds`"] == "integer"

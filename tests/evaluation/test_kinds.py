"""The experiment kinds answer the `ExperimentKind` protocol; `Driven` and `SavesStrategies`
are what PSRO alone adds."""

import inspect

from tradearena.evaluation.experiment.kinds import KINDS, Driven, ExperimentKind, SavesStrategies


def test_every_kind_defines_what_the_protocol_names():
    members = {"SECTIONS"} | {
        name
        for name, _ in inspect.getmembers(ExperimentKind, inspect.isfunction)
        if not name.startswith("_")
    }
    assert members == {"SECTIONS", "check", "plan", "run", "tables", "figures"}
    for name in KINDS:
        missing = sorted(m for m in members if not hasattr(KINDS[name], m))
        assert missing == [], (name, missing)


def test_only_psro_drives_its_rounds_and_saves_strategies_of_its_own():
    assert [name for name in KINDS if isinstance(KINDS[name], Driven)] == ["psro"]
    assert [name for name in KINDS if isinstance(KINDS[name], SavesStrategies)] == ["psro"]

"""A learned flow's parameter files, tampered with, truncated or mismatched, as a user or an
adversary would: each bad file is one clear error naming the file and the field when it is
read, never a crash, an out-of-bounds read, unbounded memory or a hang. Every case is read
(and, if it is accepted, run for a few steps) in a child process under a memory limit and a
time limit per case, so that a crash or a hang fails the case that caused it."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import textwrap
import zipfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from reference_flow import OPEN, small_model  # tests/reference_flow.py

from tradearena.envs.data.events import N_EVENT_KINDS
from tradearena.envs.simulator.learned_flow import parameters
from tradearena.envs.simulator.learned_flow.model import EventModel
from tradearena.envs.simulator.learned_flow.neural import INPUTS, NeuralModel
from tradearena.envs.simulator.learned_flow.parameters import LearnedFlowError

MEMORY = 3 << 30
"""The child's address-space limit, bytes."""
SECONDS = 30
"""The time limit of one case, seconds."""


def good_model() -> EventModel:
    """Two spread buckets, two queue buckets, a little excitation."""
    model = small_model(excitation=0.3, profile=(1.0, 1.0), bin_seconds=3600.0)
    return replace(model, meta={"pool": list(range(8))})


def good_network(base: EventModel, hidden: int = 3) -> NeuralModel:
    rng = np.random.default_rng(0)
    rows = 2 * N_EVENT_KINDS * base.mu.shape[1]
    return NeuralModel(
        base=base,
        weight_ih=rng.normal(size=(3 * hidden, INPUTS)),
        weight_hh=rng.normal(size=(3 * hidden, hidden)),
        bias_ih=rng.normal(size=3 * hidden),
        bias_hh=rng.normal(size=3 * hidden),
        table_weight=np.zeros((rows, hidden)),
        table_bias=np.log(np.maximum(np.concatenate([base.mu, base.mu]).ravel(), 1e-300)),
        burst_weight=np.zeros((2 * N_EVENT_KINDS, hidden)),
        burst_bias=np.full(2 * N_EVENT_KINDS, 2.0),
        delta=10.0,
        meta={},
    )


# ------------------------------------------------------------------------- the tampering
def set_json(name: str, key: str, raw: str) -> Callable[[Path], Path]:
    """The file ``name`` with ``key`` set to ``raw`` (JSON text, NaN allowed)."""

    def tamper(folder: Path) -> Path:
        path = folder / name
        text = json.loads(path.read_text())
        text[key] = "@@"
        path.write_text(json.dumps(text).replace('"@@"', raw))
        return path

    return tamper


def drop_json(name: str, key: str) -> Callable[[Path], Path]:
    def tamper(folder: Path) -> Path:
        path = folder / name
        text = json.loads(path.read_text())
        del text[key]
        path.write_text(json.dumps(text))
        return path

    return tamper


def set_array(npz: str, key: str, value: object | None, json_name: str) -> Callable[[Path], Path]:
    """The arrays ``npz`` with ``key`` set to ``value`` (None: taken out)."""

    def tamper(folder: Path) -> Path:
        path = folder / npz
        with np.load(path) as stored:
            arrays = {k: stored[k] for k in stored.files}
        if value is None:
            del arrays[key]
        else:
            arrays[key] = value(arrays[key]) if callable(value) else np.asarray(value)
        np.savez(path, **arrays)
        return folder / json_name

    return tamper


def write_bytes(name: str, content: bytes | None, json_name: str) -> Callable[[Path], Path]:
    """The file ``name`` replaced by ``content`` (None: removed)."""

    def tamper(folder: Path) -> Path:
        path = folder / name
        path.unlink()
        if content is not None:
            path.write_bytes(content)
        return folder / json_name

    return tamper


def claimed(npz: str, key: str, count: int, json_name: str) -> Callable[[Path], Path]:
    """The arrays ``npz`` with a member ``key`` (added, or in place of its own) whose header
    claims ``count`` float64 numbers and whose data is 64 bytes."""

    def tamper(folder: Path) -> Path:
        path = folder / npz
        with np.load(path) as stored:
            arrays = {k: stored[k] for k in stored.files if k != key}
        np.savez(path, **arrays)
        header = io.BytesIO()
        shape = {"descr": "<f8", "fortran_order": False, "shape": (count,)}
        np.lib.format.write_array_header_1_0(header, shape)
        with zipfile.ZipFile(path, "a") as archive:
            archive.writestr(f"{key}.npy", header.getvalue() + bytes(64))
        return folder / json_name

    return tamper


def bare_npy(folder: Path) -> Path:
    """The JSON naming a bare ``.npy`` (one array, no archive) as its arrays."""
    np.save(folder / "flow.npy", np.zeros(3))
    return set_json(EVENTS, "arrays", '"flow.npy"')(folder)


def nested(folder: Path) -> Path:
    """The JSON a list nested 100,000 deep."""
    (folder / EVENTS).write_text("[" * 100_000 + "]" * 100_000)
    return folder / EVENTS


def fifo(folder: Path) -> Path:
    path = folder / "flow.npz"
    path.unlink()
    os.mkfifo(path)
    return folder / "flow.json"


def device(folder: Path) -> Path:
    path = folder / "flow.npz"
    path.unlink()
    path.symlink_to("/dev/zero")
    return folder / "flow.json"


def pickled(folder: Path) -> Path:
    np.save(folder / "flow.npy", np.array([{"boom": 1}], dtype=object), allow_pickle=True)
    (folder / "flow.npy").replace(folder / "flow.npz")
    return folder / "flow.json"


def object_array(folder: Path) -> Path:
    path = folder / "flow.npz"
    with np.load(path) as stored:
        arrays = {k: stored[k] for k in stored.files}
    arrays["mu"] = np.array([{"x": 1}], dtype=object)
    np.savez(path, **arrays)
    return folder / "flow.json"


def truncated(folder: Path) -> Path:
    path = folder / "flow.npz"
    path.write_bytes(path.read_bytes()[:300])
    return folder / "flow.json"


def short_pool(folder: Path) -> Path:
    """A neural flow whose base gives too few states their pool."""
    set_json("net.base.json", "meta", '{"pool": [0, 1]}')(folder)
    return folder / NEURAL


def labelled_neural(folder: Path) -> Path:
    return set_json("flow.json", "kind", '"neural"')(folder)


EVENTS, NEURAL = "flow.json", "net.json"
NPZ, NET_NPZ = "flow.npz", "net.npz"
BASE_NPZ = "net.base.npz"
E = EVENTS


def doubled_alpha(a):
    return a * 4.0


CASES = {
    "good events": (lambda folder: folder / EVENTS, None),
    "good neural": (lambda folder: folder / NEURAL, None),
    # a crash, out-of-bounds reads, unbounded memory, hangs
    "start NaN": (set_json(E, "start", "NaN"), r"flow\.json: start must be a finite"),
    "empty mark": (
        set_array(NPZ, "marks.sizes.0.values", np.zeros(0), E),
        r"marks\.sizes\.0 needs 1 to",
    ),
    "short pool": (short_pool, r"net\.base\.json: meta\.pool must give each of the 8 states"),
    "explosive": (set_array(NPZ, "alpha", doubled_alpha, E), r"alpha is explosive"),
    "mu 1e300": (set_array(NPZ, "mu", lambda a: a * 1e300, E), r"mu and the profile give"),
    "profile inf": (set_array(NPZ, "profile", [np.inf, 1.0], E), r"profile must be finite"),
    "decays 1e300": (set_array(NPZ, "decays", [1e300, 1.0], E), r"decays must lie in"),
    "depth 1e9": (set_json(E, "depth", "1000000000"), r"depth must be a finite int"),
    "depth 2.7": (set_json(E, "depth", "2.7"), r"depth must be a finite int"),
    "bursts 1e6": (set_array(NET_NPZ, "burst_bias", np.full(12, 1e6), NEURAL), None),
    "fifo": (fifo, r"flow\.npz: not a regular file"),
    "/dev/zero": (device, r"flow\.npz: not a regular file"),
    "a spare member claiming 10^12 numbers": (claimed(NPZ, "spare", 10**12, E), None),
    "a spare neural member claiming 10^12": (claimed(NET_NPZ, "spare", 10**12, NEURAL), None),
    "mu claiming 10^12 numbers": (
        claimed(NPZ, "mu", 10**12, E),
        r"flow\.npz: mu holds 1,000,000,000,000 numbers of 8 bytes, more than the 1,073,741,824",
    ),
    "weights claiming 2^60 numbers": (
        claimed(NET_NPZ, "weight_hh", 2**60, NEURAL),
        r"net\.npz: weight_hh holds [\d,]+ numbers of 8 bytes, more than the",
    ),
    "huge profile": (set_array(NPZ, "profile", np.ones(10**7), E), r"profile must have 1 to"),
    "huge mark": (
        set_array(NPZ, "marks.gap.0.values", np.ones(3 * 10**7), E),
        r"marks\.gap\.0 needs 1 to",
    ),
    # tracebacks
    "no npz": (write_bytes(NPZ, None, E), r"flow\.npz: no such file"),
    "truncated npz": (truncated, r"flow\.npz: not a numpy \.npz"),
    "empty npz": (write_bytes(NPZ, b"", E), r"flow\.npz: not a numpy \.npz"),
    "garbage npz": (write_bytes(NPZ, b"garbage" * 100, E), r"flow\.npz: not a numpy \.npz"),
    "pickle npz": (pickled, r"flow\.npz: not a numpy \.npz"),
    "object array": (object_array, r"flow\.npz: not a numpy \.npz|mu must hold real numbers"),
    "no json": (write_bytes(E, None, E), r"flow\.json: no such file"),
    "garbage json": (write_bytes(E, b"{not json", E), r"flow\.json: not a learned flow"),
    "json list": (write_bytes(E, b"[1, 2]", E), r"flow\.json: not a learned flow"),
    "no arrays": (drop_json(E, "arrays"), r"flow\.json: no field 'arrays'"),
    "no start": (drop_json(E, "start"), r"flow\.json: no field 'start'"),
    "no meta": (drop_json(E, "meta"), r"flow\.json: no field 'meta'"),
    "no base": (drop_json(NEURAL, "base"), r"net\.json: no field 'base'"),
    "no mu": (set_array(NPZ, "mu", None, E), r"flow\.npz: no array 'mu'"),
    "no alpha": (set_array(NPZ, "alpha", None, E), r"flow\.npz: no array 'alpha'"),
    "no book": (set_array(NPZ, "book", None, E), r"flow\.npz: no array 'book'"),
    "no mark": (set_array(NPZ, "marks.queue.0.p", None, E), r"marks\.queue\.0 needs both"),
    "start text": (set_json(E, "start", '"9:30"'), r"start must be a finite"),
    "meta list": (set_json(E, "meta", "[]"), r"meta must be a finite dict|meta must be"),
    "complex mu": (set_array(NPZ, "mu", lambda a: a + 0j, E), r"mu must hold real numbers"),
    "bool mu": (set_array(NPZ, "mu", lambda a: a > 0, E), r"mu must hold real numbers"),
    "events as neural": (labelled_neural, r"flow\.json: no field 'base'"),
    "arrays outside": (set_json(E, "arrays", '"../flow.npz"'), r"'arrays' must name a file beside"),
    "wrong version": (set_json(E, "version", "7"), r"format 7; expected events, format 2 or 3"),
    # silent dead markets
    "delta NaN": (set_json(NEURAL, "delta", "NaN"), r"net\.json: delta must be a finite"),
    "delta negative": (set_json(NEURAL, "delta", "-3"), r"delta must be a decay in"),
    "weights NaN": (
        set_array(NET_NPZ, "table_bias", lambda a: a * np.nan, NEURAL),
        r"table_bias must be finite",
    ),
    "weights inf": (
        set_array(NET_NPZ, "weight_hh", lambda a: a * np.inf, NEURAL),
        r"weight_hh must be finite",
    ),
    "zero rates": (set_array(NPZ, "mu", lambda a: a * 0, E), r"mu and the profile give at most 0"),
    "unsorted edges": (
        set_array(NPZ, "queue_edges", [5.0, 4.0], E),
        r"queue_edges must be increasing",
    ),
    "NaN edges": (set_array(NPZ, "spread_edges", [np.nan], E), r"spread_edges must be finite"),
    "NaN p": (set_array(NPZ, "marks.gap.0.p", [np.nan], E), r"marks\.gap\.0 must be finite"),
    "negative p": (
        set_array(NPZ, "marks.queue.0.p", [-1.0], E),
        r"marks\.queue\.0 probabilities must be >= 0",
    ),
    "negative value": (
        set_array(NPZ, "marks.gap.0.values", [-2.0], E),
        r"marks\.gap\.0 values must lie in",
    ),
    "values longer": (
        set_array(NPZ, "marks.gap.0.values", [1.0, 2.0], E),
        r"marks\.gap\.0 needs 1 to .* values and as many probabilities",
    ),
    "p not 1": (set_array(NPZ, "marks.gap.0.p", [0.5], E), r"sum to 1, got sum 0\.5"),
    "short mu": (set_array(NPZ, "mu", lambda a: a[:, :4], E), r"mu must have shape \(6, 8\)"),
    "sizes missing one": (
        set_array(NPZ, "marks.sizes.4.values", None, E),
        r"marks\.sizes\.4 needs both|marks\.sizes must hold 5",
    ),
    "empty book": (set_array(NPZ, "book", lambda a: a * 0, E), r"book must hold lots"),
    "a bare .npy": (bare_npy, r"flow\.npy: not a numpy \.npz"),
    "JSON nested 100,000 deep": (nested, r"flow\.json: not a learned flow's parameter file"),
    "a base that names itself": (
        set_json(NEURAL, "base", '"net.json"'),
        r"net\.json: a neural flow of format 3; expected events",
    ),
    # what the judges read of meta
    **{
        f"meta.{key} {raw}": (set_json(E, "meta", f'{{"{key}": {raw}}}'), f"meta\\.{key} must be")
        for key, raw in (
            ("window", '"09:30"'),
            ("window", "[1]"),
            ("window", "[NaN, 5]"),
            ("window", "[5, 1]"),
            ("window", "[0, 1e12]"),
            ("window", "[[1], [2]]"),
            ("window", "[true, 5]"),
            ("tapes", '"day.csv"'),
            ("tapes", "[1, 2]"),
            ("tapes", '[{"name": "a/day.csv"}]'),
            ("tapes", '[{"name": "day.csv", "digest": 7}]'),
        )
    },
    # numbers the compiled flow would overflow 64-bit integers with, a dead market
    "sizes of 2^53 - 1 lots": (
        set_array(NPZ, "marks.sizes.0.values", [2.0**53 - 1], E),
        r"marks\.sizes\.0 values must lie in \[0, 1e\+09\], got \[9\.0072e\+15",
    ),
    "a gap of 1e9 ticks": (
        set_array(NPZ, "marks.gap.0.values", [1e9], E),
        r"marks\.gap\.0 values must lie in \[0, 1e\+06\]",
    ),
    "inside beyond the spread": (
        set_array(NPZ, "marks.inside.0.values", [3.0], E),
        r"marks\.inside\.0 values must lie in \[0, 1\]",
    ),
    "book offsets of 1e9 ticks": (
        set_array(NPZ, "book", lambda a: a * [1e9, 1, 1, 1], E),
        r"book offsets must lie within 1e\+06 ticks of the mid",
    ),
    "half lots in the book": (
        set_array(NPZ, "book", lambda a: a + [0, 0.5, 0, 0], E),
        r"book must hold whole lots",
    ),
    "rates of 1e-300": (
        set_array(NPZ, "mu", lambda a: a * 1e-300, E),
        r"mu and the profile give at most [\d.e-]+ events a second; must be in \[0\.001, 100000\]",
    ),
}
"""Each bad file: how it is made from the good ones (its JSON returned), and the error its
reading must raise (None: it is accepted, and runs within the limits)."""

CHILD = textwrap.dedent(
    f"""
    import json, resource, signal, sys
    resource.setrlimit(resource.RLIMIT_AS, ({MEMORY}, {MEMORY}))
    from tradearena.envs.errors import UserError
    from tradearena.envs.simulator.market import Market
    from tradearena.envs.simulator.traders.learned import LearnedFlow
    for name, path in json.loads(sys.argv[1]).items():
        print(json.dumps({{"start": name}}), flush=True)
        signal.alarm({SECONDS})
        try:
            market = Market(
                [LearnedFlow(path)], n_seats=0, n_steps=5, step_seconds=60.0,
                open_time={OPEN}, warmup_seconds=0.0, tick_size=0.01, initial_price=10_000,
            )
            market.reset(0)
            while not market.done:
                market.step()
            out = {{"ran": int(market.traders[0].sampler.events)}}
        except UserError as error:
            out = {{"error": str(error)}}
        signal.alarm(0)
        print(json.dumps({{"case": name, **out}}), flush=True)
    """
)


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, dict]:
    """Each case's result, every case read in one child process."""
    paths = {}
    for name, (tamper, _) in CASES.items():
        folder = tmp_path_factory.mktemp("case")
        model = good_model()
        model.save(folder / EVENTS)
        good_network(model).save(folder / NEURAL)
        paths[name] = str(tamper(folder))
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(paths)],
        capture_output=True,
        text=True,
        timeout=SECONDS * len(CASES),
    )
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    started = [line["start"] for line in lines if "start" in line]
    found = {line.pop("case"): line for line in lines if "case" in line}
    if len(found) < len(CASES):
        culprit = started[-1] if started else "(none)"
        pytest.fail(f"the child died (exit {done.returncode}) reading {culprit!r}: {done.stderr}")
    return found


@pytest.mark.parametrize("name", list(CASES))
def test_a_bad_flow_file_is_one_clear_error(results, name):
    """The case's error names its file and field (or, where the file is sound, it runs)."""
    expected = CASES[name][1]
    got = results[name]
    if expected is None:
        assert "ran" in got, got
    else:
        assert "error" in got, got
        assert got["error"].startswith("model: "), got["error"]
        assert "\n" not in got["error"]
        assert re.search(expected, got["error"]), got["error"]


@pytest.mark.parametrize("base", ["net.json", "other.json"])
def test_a_neural_flows_base_that_is_no_events_file_is_refused_with_its_files(tmp_path, base):
    """The files of a neural flow (`parameters.parts`, what an experiment's check copies)
    whose base names the flow itself, or another neural flow naming it back: one error
    naming the file and its base, not an endless recursion."""
    model = good_model()
    network = good_network(model)
    network.save(tmp_path / NEURAL)
    network.save(tmp_path / "other.json")
    set_json("other.json", "base", '"net.json"')(tmp_path)
    set_json(NEURAL, "base", json.dumps(base))(tmp_path)
    with pytest.raises(LearnedFlowError, match=r"net\.json: 'base' must name an events flow's"):
        parameters.parts(tmp_path / NEURAL)
    assert parameters.parts(tmp_path / "net.base.json") == [
        tmp_path / "net.base.json",
        tmp_path / "net.base.npz",
    ]

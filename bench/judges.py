"""The two judges of one market against one day (bar: 60 s each on 2 cores).

``judge_classifier_s``: the classifier two-sample tests of ``--market`` (an experiment file or
a Gymnasium id; default the light making market) against the day: its days simulated
(`evaluation.market.realism.CLASSIFIER_DAYS` and one more for the floor), the 1-min and 10-s tests
and the floor. ``judge_transfer_s``: the making zoo (14 policies) in the market and on the
day's tape under every queue model, 4 seeds x 10 sessions a side (`tradearena transfer`'s
defaults), on a local Ray of every core. The day is ``--lobster MESSAGES`` (a LOBSTER
message file, its orderbook file beside it) or, without one, a synthetic day of the light
population. Prints one JSON line per figure with the wall and this process's CPU seconds.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from tradearena.envs.data.tapes import write_lobster
from tradearena.envs.simulator.recording import synthetic_tape
from tradearena.envs.simulator.traders import light
from tradearena.evaluation.experiment.parallel import make_executor
from tradearena.evaluation.market.realism import CLASSIFIER_DAYS, discriminate
from tradearena.evaluation.market.sources import parse_source
from tradearena.evaluation.market.transfer import transfer, transfer_job

BAR_SECONDS = 60.0


def line(name: str, wall: float, cpu: float, **detail) -> None:
    record = {"name": name, "value": round(wall, 3), "unit": "s", "cpu_seconds": round(cpu, 3)}
    print(json.dumps(record | {"bar_s": BAR_SECONDS} | detail), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--market", default="tradearena/MarketMaking-v0")
    parser.add_argument("--lobster", help="a real LOBSTER message file: the day judged against")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        day = args.lobster
        if day is None:
            tape = synthetic_tape(0, traders=light(), levels=1)
            day = str(Path(tmp, "light_34200000_57600000_message_1.csv"))
            write_lobster(tape, day, day.replace("_message_", "_orderbook_"))
        detail = {"market": args.market, "day": Path(day).stem}

        wall, cpu = time.perf_counter(), time.process_time()
        reference = parse_source(day).read(1)
        market = parse_source(args.market).read(CLASSIFIER_DAYS + 1)
        tests = discriminate(market, reference)
        auc = round(tests["discriminator_auc"].auc, 3)
        line(
            "judge_classifier_s",
            time.perf_counter() - wall,
            time.process_time() - cpu,
            auc=auc,
            **detail,
        )

        wall, cpu = time.perf_counter(), time.process_time()
        executor = make_executor("ray", progress=False, job=transfer_job)
        try:
            result = transfer(args.market, day, executor=executor, task="making")
        finally:
            executor.close()
        rho = round(result.verdicts["risk_averse"].rho, 3)
        line(
            "judge_transfer_s",
            time.perf_counter() - wall,
            time.process_time() - cpu,
            spearman=rho,
            **detail,
        )


if __name__ == "__main__":
    main()

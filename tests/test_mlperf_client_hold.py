"""The replay of Intel's MLPerf Server client batcher (validation/mlperf_client_hold.py) against hand derivations of
its policy."""

import numpy as np
import pytest
from roofline.validation.mlperf_client_hold import dispatch_times


def test_a_lone_query_waits_until_its_estimate_and_wait_reach_the_send_margin():
    # 870 tokens at 0.675 ms: 0.58725 s; sent when that plus its wait passes 1.8 - 0.35 = 1.45 s
    assert dispatch_times([2.0], [870])[0] == pytest.approx(2.0 + 1.45 - 0.58725)


def test_a_long_prompt_goes_at_once():
    # 3,200 tokens at 0.575 ms: 1.84 s > 1.8 s, sent on arrival; 3,000 (1.725 s) already passes 1.45 s
    assert dispatch_times([1.0, 5.0], [3200, 3000]) == pytest.approx([1.0, 5.0])


def test_a_second_query_of_the_same_class_joins_and_the_pair_goes_together():
    # join: (870 + 870) x 0.625 ms + 0.3 s wait = 1.3875 < 1.8 - 0.25; the pair's 1.1745 s + 0.3 s passes 1.45 s
    assert dispatch_times([0.0, 0.3], [870, 870]) == pytest.approx([0.3, 0.3])


def test_queries_of_different_classes_never_share_a_group():
    # 1,200 tokens is class 1 (0.625 ms a token on arrival: 0.75 s), sent 0.7 s after it arrives
    assert dispatch_times([0.0, 0.1], [870, 1200]) == pytest.approx([1.45 - 0.58725, 0.8])


def test_no_query_is_sent_before_it_arrives_nor_held_past_the_margin():
    rng = np.random.default_rng(3)
    arrival = np.cumsum(rng.exponential(0.3, 2000))
    lengths = rng.integers(80, 2600, 2000)
    hold = dispatch_times(arrival, lengths) - arrival
    assert np.all(hold >= -1e-12) and np.all(hold <= 1.45 + 1e-9)


def test_a_late_arrival_is_sent_on_time_whatever_the_clock_reads():
    # a deadline recomputed as a sum would miss the margin by rounding at a clock of 1e6 s and never be sent
    assert dispatch_times([1e6, 1e6 + 0.5], [870, 1300]) == pytest.approx([1e6 + 0.86275, 1e6 + 0.5 + 1.45 - 0.8125])


@pytest.mark.parametrize("args", [["--rate", "nan", "--lengths", "x"], ["--rate", "1e300", "--lengths", "x"],
                                  ["--rate", "3.5", "--lengths", "no-such-file.txt"]])
def test_bad_input_is_one_line_and_exit_2(args, capsys):
    from roofline.validation.mlperf_client_hold import main

    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and ("--rate" in err or "--lengths" in err)


def test_the_replay_reads_the_histogram_and_prints_the_hold(capsys):
    from clitools import REPO
    from roofline.validation.mlperf_client_hold import main

    lengths = REPO / "validation/records/lengths/mlperf-llama3.1-8b-cnndm-inputs.txt"
    assert main(["--rate", "3.53", "--lengths", str(lengths), "--queries", "2000"]) == 0
    out = capsys.readouterr().out
    assert "hold mean" in out and "p99" in out

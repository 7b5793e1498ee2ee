"""What a Harminv mode can be trusted for: lossless Q is never a number."""

from reprolab.physics import harminv


def test_lossless_q_is_above_what_the_run_can_measure():
    lossless = {"freq": 0.3, "Q": 3e8, "decay": -5e-10, "amp": 1.0, "error": 1e-9}
    assert not harminv.q_measurable(lossless, window=200)
    assert harminv.q_text(lossless, 200).startswith("above what this run can measure")
    negative = {**lossless, "Q": -2e9}
    assert not harminv.q_measurable(negative, window=200)


def test_a_resolved_q_is_measurable():
    # Meep's ring tutorial mode: f = 0.14716, Q = 316 over a 300-unit window
    mode = {"freq": 0.14716, "Q": 316, "decay": -0.14716 / 632, "amp": 0.2, "error": 1e-7}
    assert harminv.q_measurable(mode, window=300)
    assert harminv.mode_trusted(mode, strongest_amp=0.3) == (True, "")


def test_noise_modes_are_not_trusted():
    weak = {"freq": 0.2, "Q": 50, "amp": 1e-6, "error": 1e-9}
    assert not harminv.mode_trusted(weak, strongest_amp=1.0)[0]
    vague = {"freq": 0.2, "Q": 50, "amp": 1.0, "error": 1e-2}
    assert not harminv.mode_trusted(vague, strongest_amp=1.0)[0]
    assert not harminv.q_measurable(vague, window=300)

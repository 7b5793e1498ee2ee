"""Paraphrased false claims of agreement, written in several styles (plain praise,
lower-case class words, hedged, passive, questions, numbers, directions, whole-paper
sentences), to be placed under figures and stages the code did not judge SUCCESS.
None may be printed as the report's own statement, however it is worded."""

from __future__ import annotations

NARRATIVES = (
    "The reproduced transmittance lies on top of the paper's curve across the whole band.",
    "Fig. 3 is reproduced.",
    "Excellent agreement with the digitized data.",
    "This figure is a success.",
    "The simulated reflectance tracks the published spectrum essentially perfectly.",
    "Our curve and the paper's are indistinguishable.",
    "The peak sits exactly where the authors put it.",
    "No meaningful deviation from the reference data was found.",
    "We consider this figure faithfully replicated.",
    "The stop band is recovered with high fidelity.",
    "Agreement is within the digitization uncertainty everywhere.",
    "Both curves coincide to within the line width.",
    "The result confirms the paper.",
    "Spot on: the mirror's reflectance matches.",
    "Nothing to report; it all lines up.",
    "Isn't it clear the curves agree?",
    "It can be stated with confidence that the reproduction was successful.",
    "The reproduction achieves parity with the original publication.",
    "Reproduced: yes.",
    "The paper's claims are borne out by our simulation.",
)
DISCREPANCIES = (
    "A negligible offset of the peak, well within digitization error.",
    "The reproduced peak is shifted towards the longer-wavelength side by a hair.",
    "A tiny, cosmetic difference in the peak height.",
    "An insignificant wiggle in the sidelobes; the main features agree.",
    "The dip lands a touch bluewards, which is inconsequential.",
    "The mismatch is purely within plotting accuracy.",
    "Differences are at the level of rounding.",
    "A slight discrepancy that no reader would notice.",
    "None needed: the agreement is excellent.",
    "The heights differ by less than 1 percent.",
)
SUPERVISOR = (
    "The paper is fully reproduced.",
    "Every result agrees with the paper.",
    "Excellent etalon spectrum, ready for the sweep.",
    "Great work, this stage is done and correct.",
    "The mirror stage reproduces the published reflectance; proceed.",
    "All good here: results are consistent with the authors'.",
    "Stage verified; numbers match the paper.",
    "Outcome: SUCCESS.",
    "Looks right to me, moving on.",
    "This is a clean reproduction of the figure.",
)
SUMMARIES = (  # the planner's summary and the supervisor's reasons kept in the history
    "This paper has already been reproduced successfully in full.",
    "All four figures agree with the paper.",
    "Replanning although every figure already agrees with the paper.",
    "Backtracking only for polish; the results already match perfectly.",
)
ALL = NARRATIVES + DISCREPANCIES + SUPERVISOR + SUMMARIES

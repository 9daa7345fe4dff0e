"""Procedural science problems whose answers are computed, with options that carry no cue to the answer.

Each generator returns a :class:`Problem`: the question and four options, the answers the same formula gives for
four neighbouring values of one input (the acceleration, the voltage, the temperature, the amount...), with the
value the question states drawn at a uniform rung, apart from where the ladder starts. Every option is computed
the same way from whole-number inputs, so none is rounder, larger, more central or a simpler multiple of the
others because it is the answer; which one is right follows only from reading the question and computing.

Why not distractors from common mistakes (forgetting the 1/2, Celsius for kelvin)? They are fixed multiples of
the answer, so the answer is the option the others are round multiples of: a rule on the options' values alone,
never reading the question, was right on 37 of 40 tasks (chance 10 of 40), and ``envgym audit``'s blind learner
finds it (docs/audit.md). Values are shown to 3 significant figures with their unit.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import numpy as np

GAS_CONSTANT = 8.314  # J / (mol K)
ATOMIC_MASS = {
    "H": 1.008,
    "C": 12.011,
    "N": 14.007,
    "O": 15.999,
    "Na": 22.990,
    "Mg": 24.305,
    "S": 32.06,
    "Cl": 35.45,
    "K": 39.098,
    "Ca": 40.078,
}
ATOMIC_NUMBER = {"H": 1, "C": 6, "N": 7, "O": 8, "Na": 11, "Mg": 12, "S": 16, "Cl": 17, "K": 19, "Ca": 20}
COMPOUNDS = [
    "H2O",
    "CO2",
    "CH4",
    "NH3",
    "NaCl",
    "C6H12O6",
    "H2SO4",
    "CaCO3",
    "KCl",
    "MgO",
    "C2H5OH",
    "HNO3",
    "Na2CO3",
    "MgCl2",
    "C3H8",
    "K2SO4",
    "CaCl2",
    "NaOH",
    "C12H22O11",
    "H2O2",
]


RUNGS = 4  # options per problem: the answers for four neighbouring values of one input


@dataclasses.dataclass(frozen=True)
class Problem:
    """A question and its options: ``rungs`` are the answers for four neighbouring values of one input of the
    formula (in increasing order of that input), ``answer_rung`` the one the question asks about, all in ``unit``."""

    topic: str
    question: str
    rungs: tuple[float, ...]
    answer_rung: int
    unit: str

    @property
    def value(self) -> float:
        """The correct answer."""
        return self.rungs[self.answer_rung]


def significant(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, written without an exponent (``0.00123``, ``12300``)."""
    return np.format_float_positional(float(f"{value:.{digits}g}"), trim="-")


def parse_formula(formula: str) -> dict[str, int]:
    """Element counts of a simple formula without brackets (``C2H5OH`` -> ``{C: 2, H: 6, O: 1}``)."""
    counts: dict[str, int] = {}
    for element, count in re.findall(r"([A-Z][a-z]?)(\d*)", formula):
        counts[element] = counts.get(element, 0) + int(count or 1)
    return counts


def _uniform(rng: np.random.Generator, low: int, high: int) -> int:
    return int(rng.integers(low, high + 1))


def _ladder(rng: np.random.Generator, low: int, high: int, step: int) -> tuple[list[int], int]:
    """Four input values ``base, base + step, ...`` (``base`` uniform in [low, high]) and the rung the question
    asks about, uniform and drawn apart from ``base``: the options alone say nothing about which one it is."""
    base = _uniform(rng, low, high)
    return [base + k * step for k in range(RUNGS)], int(rng.integers(RUNGS))


def kinematics(rng: np.random.Generator) -> Problem:
    t = _uniform(rng, 3, 12)
    accelerations, rung = _ladder(rng, 1, 8, 1)
    return Problem(
        "kinematics",
        f"A cart starts from rest and accelerates uniformly at {accelerations[rung]} m/s^2 for {t} s. "
        "How far does it travel in that time?",
        tuple(a * t * t / 2 for a in accelerations),
        rung,
        "m",
    )


def ohms_law(rng: np.random.Generator) -> Problem:
    ohms = _uniform(rng, 2, 60) * 10
    volts, rung = _ladder(rng, 3, 39, 3)
    return Problem(
        "electricity",
        f"A {volts[rung]} V battery drives a current through a {ohms} ohm resistor. What is the current?",
        tuple(v / ohms * 1000 for v in volts),
        rung,
        "mA",
    )


def ideal_gas(rng: np.random.Generator) -> Problem:
    moles, litres = _uniform(rng, 1, 5), _uniform(rng, 5, 40)
    temperatures, rung = _ladder(rng, 10, 60, 10)
    return Problem(
        "gases",
        f"{moles} mol of an ideal gas at {temperatures[rung]} degrees C fills a {litres} L container. "
        f"What is its pressure? (R = {GAS_CONSTANT} J/(mol K))",
        tuple(moles * GAS_CONSTANT * (celsius + 273.15) / litres for celsius in temperatures),  # kPa: J / L = kPa
        rung,
        "kPa",
    )


def molar_mass(rng: np.random.Generator) -> Problem:
    formula = COMPOUNDS[int(rng.integers(len(COMPOUNDS)))]
    counts = parse_formula(formula)
    mass = sum(ATOMIC_MASS[e] * n for e, n in counts.items())
    masses = ", ".join(f"{e} = {ATOMIC_MASS[e]}" for e in counts)
    moles, rung = _ladder(rng, 1, 5, 1)
    return Problem(
        "chemistry",
        f"What is the mass of {moles[rung]} mol of {formula}? (atomic masses: {masses})",
        tuple(n * mass for n in moles),
        rung,
        "g",
    )


def unit_conversion(rng: np.random.Generator) -> Problem:
    speeds, rung = _ladder(rng, 20, 120, 5)
    return Problem(
        "units",
        f"A train travels at {speeds[rung]} km/h. What is its speed in metres per second?",
        tuple(speed / 3.6 for speed in speeds),
        rung,
        "m/s",
    )


def energy(rng: np.random.Generator) -> Problem:
    watts = _uniform(rng, 2, 30) * 100
    minutes, rung = _ladder(rng, 2, 40, 1)
    return Problem(
        "energy",
        f"A {watts} W heater runs for {minutes[rung]} minutes. How much energy does it use?",
        tuple(watts * m * 60 / 1000 for m in minutes),
        rung,
        "kJ",
    )


def density(rng: np.random.Generator) -> Problem:
    volume = _uniform(rng, 5, 120)
    grams, rung = _ladder(rng, 20, 860, 10)
    return Problem(
        "density",
        f"A block of mass {grams[rung]} g has a volume of {volume} cm^3. What is its density?",
        tuple(g / volume * 1000 for g in grams),
        rung,
        "kg/m^3",
    )


def kinetic_energy(rng: np.random.Generator) -> Problem:
    speed = _uniform(rng, 2, 30)
    masses, rung = _ladder(rng, 2, 74, 2)
    return Problem(
        "energy",
        f"A {masses[rung]} kg object moves at {speed} m/s. What is its kinetic energy?",
        tuple(m * speed**2 / 2 for m in masses),
        rung,
        "J",
    )


GENERATORS: dict[str, Callable[[np.random.Generator], Problem]] = {
    "kinematics": kinematics,
    "ohms_law": ohms_law,
    "ideal_gas": ideal_gas,
    "molar_mass": molar_mass,
    "unit_conversion": unit_conversion,
    "energy": energy,
    "density": density,
    "kinetic_energy": kinetic_energy,
}


def option_texts(problem: Problem) -> list[str]:
    """The options' texts, one per rung in rung order (3 significant figures and the unit); they may coincide
    when neighbouring answers round alike, which the task builder redraws."""
    return [f"{significant(value)} {problem.unit}" for value in problem.rungs]

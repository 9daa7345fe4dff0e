"""Procedural science problems whose answers are computed, with distractors from common mistakes.

Each generator returns a :class:`Problem`: the question, the correct value and the values that typical mistakes
give (forgetting the 1/2 in ``s = a t^2 / 2``, Celsius instead of kelvin, ignoring subscripts in a formula, a
unit factor applied the wrong way). Values are shown to 3 significant figures with their unit.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable

import numpy as np

GAS_CONSTANT = 8.314  # J / (mol K)
ATOMIC_MASS = {"H": 1.008, "C": 12.011, "N": 14.007, "O": 15.999, "Na": 22.990, "Mg": 24.305, "S": 32.06,
               "Cl": 35.45, "K": 39.098, "Ca": 40.078}
ATOMIC_NUMBER = {"H": 1, "C": 6, "N": 7, "O": 8, "Na": 11, "Mg": 12, "S": 16, "Cl": 17, "K": 19, "Ca": 20}
COMPOUNDS = ["H2O", "CO2", "CH4", "NH3", "NaCl", "C6H12O6", "H2SO4", "CaCO3", "KCl", "MgO", "C2H5OH", "HNO3",
             "Na2CO3", "MgCl2", "C3H8", "K2SO4", "CaCl2", "NaOH", "C12H22O11", "H2O2"]


@dataclasses.dataclass(frozen=True)
class Problem:
    """A question, its computed value and the values that common mistakes give, all in ``unit``."""

    topic: str
    question: str
    value: float
    mistakes: tuple[float, ...]
    unit: str


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


def kinematics(rng: np.random.Generator) -> Problem:
    a, t = _uniform(rng, 2, 9), _uniform(rng, 3, 12)
    return Problem("kinematics", f"A cart starts from rest and accelerates uniformly at {a} m/s^2 for {t} s. "
                   "How far does it travel in that time?", a * t * t / 2, (a * t * t, a * t, a * t / 2), "m")


def ohms_law(rng: np.random.Generator) -> Problem:
    volts, ohms = _uniform(rng, 3, 48), _uniform(rng, 2, 60) * 10
    return Problem("electricity", f"A {volts} V battery drives a current through a {ohms} ohm resistor. "
                   "What is the current?", volts / ohms * 1000, (volts * ohms, ohms / volts * 1000, volts / ohms),
                   "mA")


def ideal_gas(rng: np.random.Generator) -> Problem:
    moles, celsius, litres = _uniform(rng, 1, 5), _uniform(rng, 10, 90), _uniform(rng, 5, 40)
    kelvin = celsius + 273.15
    pressure = moles * GAS_CONSTANT * kelvin / litres  # kPa: J / L = kPa
    return Problem("gases", f"{moles} mol of an ideal gas at {celsius} degrees C fills a {litres} L container. "
                   f"What is its pressure? (R = {GAS_CONSTANT} J/(mol K))", pressure,
                   (moles * GAS_CONSTANT * celsius / litres, pressure * 1000, pressure / 1000), "kPa")


def molar_mass(rng: np.random.Generator) -> Problem:
    formula = COMPOUNDS[int(rng.integers(len(COMPOUNDS)))]
    counts = parse_formula(formula)
    mass = sum(ATOMIC_MASS[e] * n for e, n in counts.items())
    masses = ", ".join(f"{e} = {ATOMIC_MASS[e]}" for e in counts)
    return Problem("chemistry", f"What is the molar mass of {formula}? (atomic masses: {masses})", mass,
                   (sum(ATOMIC_MASS[e] for e in counts), sum(ATOMIC_NUMBER[e] * n for e, n in counts.items()),
                    2 * mass), "g/mol")


def unit_conversion(rng: np.random.Generator) -> Problem:
    speed = _uniform(rng, 20, 140)
    return Problem("units", f"A train travels at {speed} km/h. What is its speed in metres per second?",
                   speed / 3.6, (speed * 3.6, speed / 60, speed * 1000 / 60), "m/s")


def energy(rng: np.random.Generator) -> Problem:
    watts, minutes = _uniform(rng, 2, 30) * 100, _uniform(rng, 2, 45)
    return Problem("energy", f"A {watts} W heater runs for {minutes} minutes. How much energy does it use?",
                   watts * minutes * 60 / 1000, (watts * minutes / 1000, watts * minutes * 3600 / 1000,
                                                 watts * minutes * 60), "kJ")


def density(rng: np.random.Generator) -> Problem:
    grams, volume = _uniform(rng, 20, 900), _uniform(rng, 5, 120)
    return Problem("density", f"A block of mass {grams} g has a volume of {volume} cm^3. What is its density?",
                   grams / volume * 1000, (volume / grams * 1000, grams / volume, grams * volume), "kg/m^3")


def kinetic_energy(rng: np.random.Generator) -> Problem:
    mass, speed = _uniform(rng, 2, 80), _uniform(rng, 2, 30)
    return Problem("energy", f"A {mass} kg object moves at {speed} m/s. What is its kinetic energy?",
                   mass * speed**2 / 2, (mass * speed**2, mass * speed / 2, mass * speed), "J")


GENERATORS: dict[str, Callable[[np.random.Generator], Problem]] = {
    "kinematics": kinematics, "ohms_law": ohms_law, "ideal_gas": ideal_gas, "molar_mass": molar_mass,
    "unit_conversion": unit_conversion, "energy": energy, "density": density, "kinetic_energy": kinetic_energy,
}


def option_texts(problem: Problem, count: int) -> list[str]:
    """The correct option first, then ``count - 1`` distinct distractors (a mistake that rounds to the correct
    text, or to another distractor, is replaced by the correct value scaled by 2, 1/2, 10, 3...)."""
    texts = [f"{significant(problem.value)} {problem.unit}"]
    fallbacks = iter(problem.value * f for f in (2, 0.5, 10, 3, 0.1, 4, 0.25, 5, 0.2, 6))
    for candidate in problem.mistakes:
        while f"{significant(candidate)} {problem.unit}" in texts:
            candidate = next(fallbacks)
        texts.append(f"{significant(candidate)} {problem.unit}")
    while len(texts) < count:
        candidate = next(fallbacks)
        if f"{significant(candidate)} {problem.unit}" not in texts:
            texts.append(f"{significant(candidate)} {problem.unit}")
    return texts[:count]

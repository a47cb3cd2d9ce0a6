"""The known answers pin every rule of docs/randomness.md §6, one mutant at a time.

Each mutant of ``tests/spec_mutants.py`` changes one rule of the independent
reference (``tests/spec_reference.py``); the stored vectors must tell every
one from the text. A mutant that passes every vector names a rule a second
implementation could get wrong unnoticed: append a case to
``scripts/make_known_answers.py`` that separates it (docs/randomness.md §7
records the addition).
"""

import pytest

import spec_mutants

STORED = spec_mutants.load()


def test_mutants_are_named_once():
    names = [m.name for m in spec_mutants.MUTANTS + spec_mutants.EQUIVALENT]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("mutant", spec_mutants.EQUIVALENT, ids=lambda m: m.name)
def test_equivalent_mutants_still_apply_and_say_why(mutant):
    # Kept in the list with their argument; `python tests/spec_mutants.py
    # --equivalent` runs them against the vectors too.
    assert mutant.why
    spec_mutants.mutate(mutant)


@pytest.mark.parametrize("mutant", spec_mutants.MUTANTS, ids=lambda m: m.name)
def test_the_vectors_detect(mutant):
    module = spec_mutants.mutate(mutant)
    assert spec_mutants.detects(module, mutant.modes, STORED) is not None, (
        f"no known-answer vector of modes {mutant.modes} tells the rule changed by "
        f"{mutant.name!r} from docs/randomness.md: add a case that does")

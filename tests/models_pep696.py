"""Models with PEP 696 type parameter defaults in the PEP 695 syntax (``class Box[T = int]:``),
which only Python 3.13+ parses: imported by ``test_typing_current.py`` on those versions only."""

from dataclasses import dataclass

type Pair[T = str] = tuple[T, T]


@dataclass
class Box[T = int]:
    item: T


@dataclass
class Labelled[K = str, V = list[K]]:
    key: K
    value: V


@dataclass
class UsesDefaults:
    box: Box  # unparametrised: Box[int]
    pair: Pair  # unparametrised: tuple[str, str]
    labelled: Labelled  # unparametrised: Labelled[str, list[str]]
    given: Box[str]

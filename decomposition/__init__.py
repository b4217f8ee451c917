"""AID: the driver (``aid``), partitions, initial clustering and one plug-in per problem."""

from .aid import AIDConfig, solve, solve_direct
from .lad import LADProblem
from .partition import Partition
from .protocol import AIDProblem
from .svm import SVMProblem

__all__ = ["AIDConfig", "AIDProblem", "LADProblem", "Partition", "SVMProblem", "solve",
           "solve_direct"]

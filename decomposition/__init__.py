"""AID: the driver (``aid``), partitions, initial clustering and one plug-in per problem."""

from .aid import AIDConfig, solve, solve_direct
from .lad import LADProblem
from .partition import Partition
from .protocol import AIDProblem
from .s3vm import S3VMProblem
from .svm import SVMProblem

__all__ = ["AIDConfig", "AIDProblem", "LADProblem", "Partition", "S3VMProblem", "SVMProblem", "solve",
           "solve_direct"]

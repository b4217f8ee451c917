"""AID: the plug-in contract (``protocol``), the run framework (``run``), the loop (``aid``),
partitions, initial clustering and one plug-in per problem."""

from .aggout import AggregateOutputProblem
from .aid import solve, solve_direct
from .lad import LADProblem
from .modified_svm import ModifiedSVMProblem
from .partition import Partition
from .protocol import AIDProblem, Iterate, Lifted, Split, Stop
from .run import AIDConfig, Run, RunConfig
from .s3vm import S3VMProblem
from .svm import SVMProblem

__all__ = ["AggregateOutputProblem", "AIDConfig", "AIDProblem", "Iterate", "LADProblem", "Lifted",
           "ModifiedSVMProblem", "Partition", "Run", "RunConfig", "S3VMProblem", "SVMProblem",
           "Split", "Stop", "solve", "solve_direct"]

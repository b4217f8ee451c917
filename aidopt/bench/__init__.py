"""``aidopt bench <family>``: one module per family, each running aidopt and its baselines side
by side in subprocesses (results in docs/benchmarks.md). Nothing here is imported by the library.

Every worker times a solve after the libraries are loaded, as the baselines' are (LIBSVM, R's
quantreg, a MIP solver): ``import aidopt`` loads its public names lazily, so importing this
package loads all of them (Pyomo, the solver layer, numba's and Cython's modules) before any
clock starts, as ``import aidopt`` did before the names became lazy. The cost of the first import
is measured on its own (docs/benchmarks.md, "Import and start-up").
"""

import aidopt as _aidopt

for _name in _aidopt.__all__:  # the whole public API, loaded before any worker's clock
    getattr(_aidopt, _name)

"""One plug-in per problem on the engine's contracts: AID plug-ins (:class:`~aidopt.decomposition.
protocol.AIDProblem`: ``lad``, ``svm``, ``kernel_svm`` with ``mean_kernel``, ``modified_svm``,
``s3vm``, ``gsvm``, ``aggout``, ``facility``, ``facility_radius``) and steps of the
successive-linearization loop (``fsv``, ``slaag``)."""

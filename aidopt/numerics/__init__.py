"""aidopt's own numerical methods, independent of the engine: interior points for the aggregated
LAD LP (``fn``, Frisch–Newton) and SVM QPs (``fm``, Ferris–Munson), SMO (``smo``), SOR (``sor``),
kernel functions (``kernels``), kernel k-means (``kernel_kmeans``) and the RLSC fitness and local
search (``rlsc``)."""

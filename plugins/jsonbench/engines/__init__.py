"""Engine adapters. The contract is documented in :mod:`jsonbench.engines.base`; adapters are registered in ``include/matrix.yaml``."""

"""tawa.mega: a decoder LLM's decode step as one persistent kernel.

`compile(config, weights, max_batch, max_seq)` returns a MegaModel whose
`decode` / `generate` run each decode step as one launch of the mega-kernel
(docs/MEGAKERNEL.md); `reference` holds the PyTorch reference decode it is
checked against. Importing this package imports PyTorch.
"""
from .decoder import MegaError, MegaModel, StepKernel, build_library, compile  # noqa: F401
from .reference import ModelShape, ReferenceDecoder, random_state_dict  # noqa: F401

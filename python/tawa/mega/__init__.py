"""tawa.mega: a decoder LLM's decode step as one persistent kernel.

`compile(config, weights, max_batch, max_seq)` returns a MegaModel whose
`decode` / `generate` run each decode step as one launch of the mega-kernel
(docs/MEGAKERNEL.md); `reference` holds the PyTorch reference decode it is
checked against; `build` builds the library behind it. Importing the package
imports nothing heavy: the names below load their module (and PyTorch) on
first use.
"""
import importlib

_EXPORTS = {
    'MegaError': 'build',
    'build_library': 'build',
    'build_libraries': 'build',
    'specialization_flags': 'build',
    'model_specialization_flags': 'build',
    'MegaModel': 'decoder',
    'StepKernel': 'decoder',
    'compile': 'decoder',
    'pack_weight': 'decoder',
    'ModelShape': 'reference',
    'ReferenceDecoder': 'reference',
    'random_state_dict': 'reference',
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'tawa.mega' has no attribute {name!r}")
    return getattr(importlib.import_module(f'{__name__}.{module}'), name)

"""tawa: warp-specialized kernels for Hopper. `tawa.runtime` loads and
launches compiled kernels on PyTorch tensors."""

"""A tiny stand-in for the parts of PyTorch that python/tawa/runtime.py uses,
for testing the ctypes binding on machines without torch or a GPU (see
python_binding_test.py). Not a tensor library: tensors are just an address,
a dtype, a shape and strides."""

float16, bfloat16, float32 = "float16", "bfloat16", "float32"
float8_e4m3fn, float8_e5m2, int8, int32, int64 = "float8_e4m3fn", "float8_e5m2", "int8", "int32", "int64"


class Tensor:
    def __init__(self, ptr, dtype, shape, strides, device="cuda:0"):
        self._ptr, self.dtype, self.shape, self._strides = ptr, dtype, tuple(shape), tuple(strides)
        self.device = device
        self.is_cuda = device.startswith("cuda")

    def data_ptr(self):
        return self._ptr

    def dim(self):
        return len(self.shape)

    def stride(self, d):
        return self._strides[d]


class _Cuda:
    class Stream:
        def __init__(self, handle=0):
            self.cuda_stream = handle

    def init(self):
        pass

    def synchronize(self):
        pass

    def current_device(self):
        return 0

    def current_stream(self):
        return self.Stream(0)


cuda = _Cuda()

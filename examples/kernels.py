"""tawa's example kernels: ordinary Triton kernels for Hopper written against host-side TMA
tensor descriptors (``triton.tools.tensor_descriptor.TensorDescriptor`` arguments, used through
``desc.load`` / ``desc.store``).

These are the inputs tawa is built to compile. ``gen_ttir.py`` next to this file turns each of them
into the TTIR Triton 3.6 prints (``ttir/<name>.ttir``); the table ``EXAMPLES`` at the bottom says which
specialization (descriptor element types, block shapes, constexprs) each file comes from.

Only ``triton`` is imported here: no PyTorch, no GPU is needed to build the TTIR.
"""

import triton
import triton.language as tl


@triton.jit
def matmul_persistent_kernel(a_desc, b_desc, c_desc, M, N, K,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_SIZE_M: tl.constexpr, NUM_SMS: tl.constexpr):
    """matmul_kernel written persistent, as Triton's persistent-matmul tutorial does: NUM_SMS
    programs (launch grid (min(NUM_SMS, tiles),)) each walk the tiles start, start + NUM_SMS, ...,
    in groups of GROUP_SIZE_M tile rows."""
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in range(start_pid, num_pid_m * num_pid_n, NUM_SMS):
        group_id = tile_id // num_pid_in_group
        first_pid_m = group_id * GROUP_SIZE_M
        group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
        pid_m = first_pid_m + (tile_id % group_size_m)
        pid_n = (tile_id % num_pid_in_group) // group_size_m
        accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for off_k in range(0, K, BLOCK_K):
            a = a_desc.load([pid_m * BLOCK_M, off_k])
            b = b_desc.load([pid_n * BLOCK_N, off_k])
            accumulator = tl.dot(a, b.T, accumulator)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], accumulator.to(c_desc.dtype))


@triton.jit
def matmul_kernel(a_desc, b_desc, c_desc, M, N, K,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    """C[M, N] = A[M, K] @ B[N, K]^T, one BLOCK_M x BLOCK_N tile of C per program.

    A and B are both K-major (B is stored as N x K, the layout wgmma wants for every input type,
    fp8 included). Programs are ordered in groups of GROUP_SIZE_M tile rows so that neighbouring
    programs share A and B tiles in L2. The accumulator is fp32; the result is converted to the
    element type of ``c_desc`` on the way out.
    """
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for off_k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, off_k])
        b = b_desc.load([off_n, off_k])
        accumulator = tl.dot(a, b.T, accumulator)

    c = accumulator.to(c_desc.dtype)
    c_desc.store([off_m, off_n], c)


@triton.jit
def attention_fwd_kernel(q_desc, k_desc, v_desc, o_desc, sm_scale, seq_len,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr,
                         CAUSAL: tl.constexpr):
    """Flash-attention forward, O = softmax(Q K^T * sm_scale) V, for one BLOCK_M block of queries.

    Q, K, V and O are 2-D views [batch * heads * seq_len, HEAD_DIM] of contiguous
    [batch, heads, seq_len, HEAD_DIM] tensors; program (i, j) handles query block i of the
    (batch, head) pair j. The softmax is computed online in base 2: the scale is multiplied by
    log2(e) once so that every exponential is an ``exp2``. Running row maxima ``m_i`` and row sums
    ``l_i`` rescale the fp32 accumulator as new key blocks arrive. With CAUSAL, key blocks past
    the diagonal are skipped and the diagonal block is masked (this needs BLOCK_M == BLOCK_N).
    """
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    row_base = off_bh * seq_len
    q_row = row_base + start_m * BLOCK_M

    q = q_desc.load([q_row, 0])
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

    if CAUSAL:
        hi = (start_m + 1) * BLOCK_M
    else:
        hi = seq_len
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)

    for start_n in range(0, hi, BLOCK_N):
        k = k_desc.load([row_base + start_n, 0])
        s = tl.dot(q, k.T) * qk_scale
        if CAUSAL:
            keep = offs_m[:, None] >= (start_n + offs_n)[None, :]
            s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row_base + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_desc.store([q_row, 0], acc.to(o_desc.dtype))


@triton.jit
def attention_fwd_lse_kernel(q_desc, k_desc, v_desc, o_desc, lse_ptr, sm_scale, seq_len,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """attention_fwd_kernel without the causal mask, also storing each query row's logsumexp of the
    scaled scores, log(sum_j exp(q k_j * sm_scale)), through a pointer: ``lse_ptr[b * H * seq_len + row]``
    (what a backward pass reads). The statistics stay in base 2 inside the loop; the store converts."""
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    row_base = off_bh * seq_len
    q_row = row_base + start_m * BLOCK_M

    q = q_desc.load([q_row, 0])
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        k = k_desc.load([row_base + start_n, 0])
        s = tl.dot(q, k.T) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row_base + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_desc.store([q_row, 0], acc.to(o_desc.dtype))
    offs_m = q_row + tl.arange(0, BLOCK_M)
    tl.store(lse_ptr + offs_m, (m_i + tl.math.log2(l_i)) * 0.6931471805599453)  # ln(2)


@triton.jit
def attention_fwd_causal_split_kernel(q_desc, k_desc, v_desc, o_desc, sm_scale, seq_len,
                                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                                      HEAD_DIM: tl.constexpr):
    """Causal attention_fwd_kernel written as two loops, as Triton's tutorial writes it: the key
    blocks left of the diagonal without a mask, then the diagonal band with it (BLOCK_M is a
    multiple of BLOCK_N)."""
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    row_base = off_bh * seq_len
    q_row = row_base + start_m * BLOCK_M

    q = q_desc.load([q_row, 0])
    qk_scale = sm_scale * 1.4426950408889634  # log2(e)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)

    band = start_m * BLOCK_M
    for start_n in range(0, band, BLOCK_N):  # off the band: every key precedes every query
        k = k_desc.load([row_base + start_n, 0])
        s = tl.dot(q, k.T) * qk_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row_base + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new
    for start_n in range(band, band + BLOCK_M, BLOCK_N):  # the band: mask keys after the query
        k = k_desc.load([row_base + start_n, 0])
        s = tl.dot(q, k.T) * qk_scale
        keep = offs_m[:, None] >= (start_n + offs_n)[None, :]
        s = tl.where(keep, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.math.exp2(s - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row_base + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_desc.store([q_row, 0], acc.to(o_desc.dtype))


@triton.jit
def attention_fwd_kt_kernel(q_desc, kt_desc, v_desc, o_desc, sm_scale, seq_len,
                            BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD_DIM: tl.constexpr):
    """attention_fwd_kernel (non-causal) with K stored pre-transposed and the softmax in base e:
    kt_desc views K^T as [batch * heads * HEAD_DIM, seq_len] (each head's [HEAD_DIM, seq_len]
    block), so QK^T reads a [HEAD_DIM, BLOCK_N] tile as it is, and ``exp`` replaces ``exp2``."""
    start_m = tl.program_id(0)
    off_bh = tl.program_id(1)
    row_base = off_bh * seq_len
    q_row = row_base + start_m * BLOCK_M

    q = q_desc.load([q_row, 0])
    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, seq_len, BLOCK_N):
        kt = kt_desc.load([off_bh * HEAD_DIM, start_n])
        s = tl.dot(q, kt) * sm_scale
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        p = tl.exp(s - m_new[:, None])
        alpha = tl.exp(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None]
        v = v_desc.load([row_base + start_n, 0])
        acc = tl.dot(p.to(v.dtype), v, acc)
        m_i = m_new

    acc = acc / l_i[:, None]
    o_desc.store([q_row, 0], acc.to(o_desc.dtype))


# ---------------------------------------------------------------------------------------------
# The specializations whose TTIR lives in examples/ttir/. For each: the kernel, the descriptor
# arguments as (element type, block shape), the remaining runtime arguments with their Triton
# types, and the constexprs. Integer sizes are assumed to be multiples of 16, as they are for every
# shape tawa's tests use; Triton's launcher would mark them ``tt.divisibility = 16`` too.
# ---------------------------------------------------------------------------------------------

@triton.jit
def matmul_pointer_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                          stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                          GROUP_SIZE_M: tl.constexpr):
    """C[M, N] = A[M, K] @ B[K, N] written the way most Triton GEMMs are: tiles addressed by
    tensors of pointers (no descriptors), bounds masks on K and on the stored tile, pointer tiles
    advanced by BLOCK_K every iteration, and the rows and columns of A and B past M and N wrapped
    around with `%` (their products land in rows and columns the masked store drops). tawa turns
    these loads and the store into TMA (-tawa-pointer-tile-descriptors). A Triton launch with
    contiguous rows specializes the unit strides (stride_ak, stride_bn, stride_cn) to the
    constant 1, as the table below does.
    """
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group_tiles = GROUP_SIZE_M * tiles_n
    group = pid // group_tiles
    group_row = group * GROUP_SIZE_M
    group_height = min(tiles_m - group_row, GROUP_SIZE_M)
    tile_m = group_row + ((pid % group_tiles) % group_height)
    tile_n = (pid % group_tiles) // group_height

    rows = (tile_m * BLOCK_M + tl.arange(0, BLOCK_M)) % M
    cols = (tile_n * BLOCK_N + tl.arange(0, BLOCK_N)) % N
    ks = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rows[:, None] * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - step * BLOCK_K
        a = tl.load(a_tile, mask=ks[None, :] < k_left, other=0.0)
        b = tl.load(b_tile, mask=ks[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk

    out_rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    out_cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    c_tile = c_ptr + out_rows[:, None] * stride_cm + out_cols[None, :] * stride_cn
    in_bounds = (out_rows[:, None] < M) & (out_cols[None, :] < N)
    tl.store(c_tile, acc.to(c_ptr.dtype.element_ty), mask=in_bounds)


@triton.jit
def matmul_block_pointer_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                                stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                                BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                                GROUP_SIZE_M: tl.constexpr):
    """C[M, N] = A[M, K] @ B[K, N] through block pointers (tl.make_block_ptr, tl.advance,
    boundary checks with zero padding). Triton's front end already rewrites block pointers into
    tensors of pointers with i64 offsets and `0 <= index < bound` masks; tawa turns those into
    TMA like any other pointer tile.
    """
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    group_tiles = GROUP_SIZE_M * tiles_n
    group_row = (pid // group_tiles) * GROUP_SIZE_M
    group_height = min(tiles_m - group_row, GROUP_SIZE_M)
    tile_m = group_row + ((pid % group_tiles) % group_height)
    tile_n = (pid % group_tiles) // group_height

    a_block = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak), (tile_m * BLOCK_M, 0),
                                (BLOCK_M, BLOCK_K), (1, 0))
    b_block = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, tile_n * BLOCK_N),
                                (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BLOCK_K)):
        a = tl.load(a_block, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_block, boundary_check=(0, 1), padding_option="zero")
        acc = tl.dot(a, b, acc)
        a_block = tl.advance(a_block, (0, BLOCK_K))
        b_block = tl.advance(b_block, (BLOCK_K, 0))
    c_block = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, stride_cn), (tile_m * BLOCK_M, tile_n * BLOCK_N),
                                (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_block, acc.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


@triton.jit
def matmul_kn_kernel(a_desc, b_desc, c_desc, M, N, K,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                     GROUP_SIZE_M: tl.constexpr):
    """matmul_kernel with B stored K x N, as a row-major weight usually is: C[M, N] = A[M, K] @ B[K, N].
    B's tile is [BLOCK_K, BLOCK_N], an MN-major wgmma operand (fp8: transposed in shared memory)."""
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    accumulator = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for off_k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, off_k])
        b = b_desc.load([off_k, off_n])
        accumulator = tl.dot(a, b, accumulator)

    c = accumulator.to(c_desc.dtype)
    c_desc.store([off_m, off_n], c)


def _gemm_persistent(in_ty, out_ty, bm, bn, bk, group_m=8, num_sms=132):
    return dict(
        kernel=matmul_persistent_kernel,
        descriptors={"a_desc": (in_ty, [bm, bk]), "b_desc": (in_ty, [bn, bk]), "c_desc": (out_ty, [bm, bn])},
        scalars={"M": "i32", "N": "i32", "K": "i32"},
        divisible_by_16=["M", "N", "K"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_SIZE_M": group_m, "NUM_SMS": num_sms},
    )


def _gemm(in_ty, out_ty, bm, bn, bk, group_m=8):
    return dict(
        kernel=matmul_kernel,
        descriptors={"a_desc": (in_ty, [bm, bk]), "b_desc": (in_ty, [bn, bk]), "c_desc": (out_ty, [bm, bn])},
        scalars={"M": "i32", "N": "i32", "K": "i32"},
        divisible_by_16=["M", "N", "K"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_SIZE_M": group_m},
    )


def _gemm_pointer(ty, bm, bn, bk, group_m=8, a_column_major=False, kernel=None):
    # What a launch on row-major tensors with odd M, N, K and 16-byte aligned rows specializes:
    # the pointers and row strides divisible by 16, the unit strides constant. With A
    # column-major (A^T stored row-major), stride_am is the unit one and stride_ak the row stride.
    a_unit, a_row = ("stride_am", "stride_ak") if a_column_major else ("stride_ak", "stride_am")
    return dict(
        kernel=kernel or matmul_pointer_kernel,
        descriptors={},
        scalars={"a_ptr": "*" + ty, "b_ptr": "*" + ty, "c_ptr": "*" + ty, "M": "i32", "N": "i32",
                 "K": "i32", a_row: "i32", "stride_bk": "i32", "stride_cm": "i32"},
        divisible_by_16=["a_ptr", "b_ptr", "c_ptr", a_row, "stride_bk", "stride_cm"],
        constexprs={a_unit: 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_M": bm, "BLOCK_N": bn,
                    "BLOCK_K": bk, "GROUP_SIZE_M": group_m},
    )


@triton.jit
def matmul_scale_silu_kernel(a_desc, b_desc, c_desc, scale_ptr, M, N, K,
                             BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                             GROUP_SIZE_M: tl.constexpr):
    """C = SiLU((A @ B^T) * scale[:, None]): a per-row scale read by pointer and an activation
    in the epilogue (a dequantized linear layer followed by its gate, say). The epilogue's
    element-wise chain must not cost registers beyond the accumulator's.
    """
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for off_k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, off_k])
        b = b_desc.load([off_n, off_k])
        acc = tl.dot(a, b.T, acc)
    rows = off_m + tl.arange(0, BLOCK_M)
    scale = tl.load(scale_ptr + rows, mask=rows < M, other=0.0)
    acc = acc * scale[:, None]
    acc = acc * tl.sigmoid(acc)
    c_desc.store([off_m, off_n], acc.to(c_desc.dtype))


@triton.jit
def matmul_axpby_kernel(a_desc, b_desc, c_desc, d_desc, alpha, beta, M, N, K,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                        GROUP_SIZE_M: tl.constexpr):
    """D = alpha * (A @ B^T) + beta * C (BLAS's GEMM): a tile of C, read through a descriptor in
    the epilogue, combined with the accumulator.
    """
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_M)
    num_pid_n = tl.cdiv(N, BLOCK_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    first_pid_m = (pid // num_pid_in_group) * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    off_m = pid_m * BLOCK_M
    off_n = pid_n * BLOCK_N
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for off_k in range(0, K, BLOCK_K):
        a = a_desc.load([off_m, off_k])
        b = b_desc.load([off_n, off_k])
        acc = tl.dot(a, b.T, acc)
    c = c_desc.load([off_m, off_n]).to(tl.float32)
    d = alpha * acc + beta * c
    d_desc.store([off_m, off_n], d.to(d_desc.dtype))


def _gemm_axpby(ty, bm, bn, bk, group_m=8):
    return dict(
        kernel=matmul_axpby_kernel,
        descriptors={"a_desc": (ty, [bm, bk]), "b_desc": (ty, [bn, bk]), "c_desc": (ty, [bm, bn]),
                     "d_desc": (ty, [bm, bn])},
        scalars={"alpha": "fp32", "beta": "fp32", "M": "i32", "N": "i32", "K": "i32"},
        divisible_by_16=["M", "N", "K"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_SIZE_M": group_m},
    )


def _gemm_scale_silu(in_ty, out_ty, bm, bn, bk, group_m=8):
    return dict(
        kernel=matmul_scale_silu_kernel,
        descriptors={"a_desc": (in_ty, [bm, bk]), "b_desc": (in_ty, [bn, bk]), "c_desc": (out_ty, [bm, bn])},
        scalars={"scale_ptr": "*fp32", "M": "i32", "N": "i32", "K": "i32"},
        divisible_by_16=["scale_ptr", "M", "N", "K"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_SIZE_M": group_m},
    )


def _gemm_kn(in_ty, out_ty, bm, bn, bk, group_m=8):
    return dict(
        kernel=matmul_kn_kernel,
        descriptors={"a_desc": (in_ty, [bm, bk]), "b_desc": (in_ty, [bk, bn]), "c_desc": (out_ty, [bm, bn])},
        scalars={"M": "i32", "N": "i32", "K": "i32"},
        divisible_by_16=["M", "N", "K"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_SIZE_M": group_m},
    )


def _attention(in_ty, out_ty, bm, bn, head_dim, causal):
    return dict(
        kernel=attention_fwd_kernel,
        descriptors={"q_desc": (in_ty, [bm, head_dim]), "k_desc": (in_ty, [bn, head_dim]),
                     "v_desc": (in_ty, [bn, head_dim]), "o_desc": (out_ty, [bm, head_dim])},
        scalars={"sm_scale": "fp32", "seq_len": "i32"},
        divisible_by_16=["seq_len"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": head_dim, "CAUSAL": causal},
    )


def _attention_lse(in_ty, out_ty, bm, bn, head_dim):
    return dict(
        kernel=attention_fwd_lse_kernel,
        descriptors={"q_desc": (in_ty, [bm, head_dim]), "k_desc": (in_ty, [bn, head_dim]),
                     "v_desc": (in_ty, [bn, head_dim]), "o_desc": (out_ty, [bm, head_dim])},
        scalars={"lse_ptr": "*fp32", "sm_scale": "fp32", "seq_len": "i32"},
        divisible_by_16=["lse_ptr", "seq_len"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": head_dim},
    )


def _attention_split(in_ty, out_ty, bm, bn, head_dim):
    return dict(
        kernel=attention_fwd_causal_split_kernel,
        descriptors={"q_desc": (in_ty, [bm, head_dim]), "k_desc": (in_ty, [bn, head_dim]),
                     "v_desc": (in_ty, [bn, head_dim]), "o_desc": (out_ty, [bm, head_dim])},
        scalars={"sm_scale": "fp32", "seq_len": "i32"},
        divisible_by_16=["seq_len"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": head_dim},
    )


def _attention_kt(in_ty, out_ty, bm, bn, head_dim):
    return dict(
        kernel=attention_fwd_kt_kernel,
        descriptors={"q_desc": (in_ty, [bm, head_dim]), "kt_desc": (in_ty, [head_dim, bn]),
                     "v_desc": (in_ty, [bn, head_dim]), "o_desc": (out_ty, [bm, head_dim])},
        scalars={"sm_scale": "fp32", "seq_len": "i32"},
        divisible_by_16=["seq_len"],
        constexprs={"BLOCK_M": bm, "BLOCK_N": bn, "HEAD_DIM": head_dim},
    )


EXAMPLES = {
    "gemm_fp16": _gemm("fp16", "fp16", 128, 256, 64),
    "gemm_fp16_128x128": _gemm("fp16", "fp16", 128, 128, 64),
    "gemm_bf16": _gemm("bf16", "bf16", 128, 256, 64),
    "gemm_fp8": _gemm("fp8e4nv", "fp16", 128, 256, 128),
    # Tiles addressed by tensors of pointers (the most common Triton GEMM).
    "gemm_ptr_fp16": _gemm_pointer("fp16", 128, 256, 64),
    "gemm_ptr_fp16_128x128": _gemm_pointer("fp16", 128, 128, 64),
    # The same source launched on a column-major A (an MN-major A operand).
    "gemm_ptr_fp16_a_colmajor": _gemm_pointer("fp16", 128, 128, 64, a_column_major=True),
    # Block pointers (tl.make_block_ptr / tl.advance).
    "gemm_blockptr_fp16": _gemm_pointer("fp16", 128, 256, 64, kernel=matmul_block_pointer_kernel),
    "attn_fwd_fp16": _attention("fp16", "fp16", 128, 128, 128, False),
    "attn_fwd_fp16_causal": _attention("fp16", "fp16", 128, 128, 128, True),
    # Head dimension 64; 64 x 64 blocks (one consumer group) with the causal mask; the logsumexp
    # stored by pointer.
    "attn_fwd_fp16_d64": _attention("fp16", "fp16", 128, 128, 64, False),
    "attn_fwd_bf16_64x64_causal": _attention("bf16", "bf16", 64, 64, 128, True),
    "attn_fwd_lse_fp16": _attention_lse("fp16", "fp16", 128, 128, 128),
    "attn_fwd_fp16_causal_split": _attention_split("fp16", "fp16", 128, 128, 128),
    "attn_fwd_fp16_kt_exp": _attention_kt("fp16", "fp16", 128, 128, 128),
    # Narrow K blocks: rows of 64 bytes (BLOCK_K = 32 at 16 bits: TMA's and wgmma's 64-byte
    # swizzle) and of 32 bytes (BLOCK_K = 16 at 16 bits, 32 at 8 bits: the 32-byte swizzle); and
    # B stored K x N with 32-row tiles.
    "gemm_fp16_bk32": _gemm("fp16", "fp16", 128, 128, 32),
    "gemm_bf16_bk16": _gemm("bf16", "bf16", 128, 128, 16),
    "gemm_fp8_bk32": _gemm("fp8e4nv", "fp16", 128, 128, 32),
    "gemm_kn_fp16_bk32": _gemm_kn("fp16", "fp16", 128, 128, 32),
    # A per-row scale and SiLU in the epilogue.
    "gemm_scale_silu_fp16": _gemm_scale_silu("fp16", "fp16", 128, 256, 64),
    "gemm_scale_silu_fp16_128x128": _gemm_scale_silu("fp16", "fp16", 128, 128, 64),
    # Narrow N blocks: accumulators of 32, 16 and 8 columns (wgmma n32, n16, n8), stored in one
    # box of 64-, 32- or 16-byte rows.
    "gemm_fp16_128x32": _gemm("fp16", "fp16", 128, 32, 64),
    "gemm_bf16_128x16": _gemm("bf16", "bf16", 128, 16, 64),
    "gemm_fp16_128x8": _gemm("fp16", "fp16", 128, 8, 64),
    "gemm_fp8_128x32": _gemm("fp8e4nv", "fp16", 128, 32, 128),
    # ... with B stored K x N (an MN-major B of 64- or 32-byte rows): the tutorial's pointer GEMM
    # and a descriptor one.
    "gemm_ptr_fp16_128x32": _gemm_pointer("fp16", 128, 32, 64),
    # The tutorial's pointer GEMM with 128 x 64 and 64 x 128 tiles.
    "gemm_ptr_fp16_128x64": _gemm_pointer("fp16", 128, 64, 64),
    "gemm_ptr_fp16_64x128": _gemm_pointer("fp16", 64, 128, 64),
    "gemm_kn_bf16_128x16": _gemm_kn("bf16", "bf16", 128, 16, 64),
    # 64-row tiles: one consumer warp group, the shape of a mega-kernel task
    # (gpu/mega/test_mega_compiled_tasks.cu).
    "gemm_bf16_64x128": _gemm("bf16", "bf16", 64, 128, 64),
    "gemm_bf16_64x64": _gemm("bf16", "bf16", 64, 64, 64),
    "gemm_bf16_64x32": _gemm("bf16", "bf16", 64, 32, 64),
    "gemm_bf16_64x16": _gemm("bf16", "bf16", 64, 16, 64),
    # fp8 with B stored K x N: the producer transposes each B tile to [BLOCK_N, BLOCK_K] (fp8
    # wgmma reads K-major operands only), here tiles with a 64-byte extent on either side (B tiles
    # [128, 64] and [64, 128] bytes, the 64-byte swizzle on one side of the transpose).
    "gemm_kn_fp8_bn64": _gemm_kn("fp8e4nv", "fp16", 128, 64, 128),
    "gemm_kn_fp8_bk64": _gemm_kn("fp8e4nv", "fp16", 128, 128, 64),
    # The descriptor GEMM written persistent (its own tile loop over NUM_SMS programs), 128 x 128.
    "gemm_persistent_fp16_128x128": _gemm_persistent("fp16", "fp16", 128, 128, 64),
    # D = alpha * A B^T + beta * C: C read by descriptor in the epilogue.
    "gemm_axpby_bf16": _gemm_axpby("bf16", 128, 256, 64),
    "gemm_axpby_bf16_128x128": _gemm_axpby("bf16", 128, 128, 64),
}

"""Builds the mega-kernel library behind tawa.mega (no PyTorch needed).

`build_library()` compiles the planner (lib/Mega/*.cpp, g++) and the decode
kernel with its C API (lib/Mega/Runtime/MegaDecoder.cu, nvcc, sm_90a) into
libtawa_mega.so, once per source version and flags, and returns its path. The
sources come from $TAWA_SOURCE_DIR, else the repository this module sits in,
else the copy an installed package carries (tawa/_mega_src, with the device
headers in tawa/_include). No MLIR is needed.
"""
import hashlib
import os
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor

_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_REPO = os.path.dirname(os.path.dirname(_PKG))
_KERNEL = os.path.join('lib', 'Mega', 'Runtime', 'MegaDecoder.cu')


class MegaError(RuntimeError):
    """A failure of the mega-kernel library or its build, with its message."""


def source_roots():
    """(root holding lib/Mega, include directories), first found of
    $TAWA_SOURCE_DIR, the repository, the installed package's copy."""
    env = os.environ.get('TAWA_SOURCE_DIR')
    candidates = [env] if env else [_REPO, os.path.join(_PKG, '_mega_src')]
    for root in candidates:
        if os.path.isfile(os.path.join(root, _KERNEL)):
            includes = [os.path.join(root, 'include')]
            packaged = os.path.join(_PKG, '_include')
            if not os.path.isdir(os.path.join(includes[0], 'tawa', 'device')):
                includes.append(packaged)
            return root, includes
    raise MegaError('tawa.mega builds its library from the tawa sources, not found in '
                    + ', '.join(candidates) + ' (set TAWA_SOURCE_DIR to a tawa checkout)')


def _sources(root, includes):
    mega = os.path.join(root, 'lib', 'Mega')
    cpp = sorted(os.path.join(mega, f) for f in os.listdir(mega) if f.endswith('.cpp'))
    headers = []
    for inc in includes:
        for sub in ('tawa/Mega', 'tawa/device', 'tawa/runtime'):
            for dirpath, _, files in os.walk(os.path.join(inc, sub)):
                headers += [os.path.join(dirpath, f) for f in files]
    return cpp, os.path.join(root, _KERNEL), sorted(headers)


def _nvcc():
    for cand in (os.environ.get('NVCC'), '/usr/local/cuda/bin/nvcc'):
        if cand and os.path.isfile(cand):
            return cand
    return 'nvcc'


def specialization_flags(group, head_dim):
    """The nvcc flags of a library with only the attention variant one model
    needs (include/tawa/device/mega/config.cuh): `group` q heads per KV head,
    and the path for head dimensions other than 128 only when `head_dim` is
    not 128. The kernel with every variant is about 720 KB of machine code,
    one model's about 210 KB, and its decode step runs 1.5-4 % faster (runs
    223-224, docs/PERFORMANCE.md).
    """
    # The mask's bit log2(G) is G itself; a group the kernel has no variant
    # for keeps them all (the planner then refuses the model with its own
    # message).
    mask = group if group in (1, 2, 4, 8) else 0xF
    return [f'-DTAWA_MEGA_ATTN_GROUPS={mask}',
            f'-DTAWA_MEGA_ATTN_ANY_HEAD_DIM={0 if head_dim == 128 else 1}']


def model_specialization_flags(shape):
    """specialization_flags for a model: `shape` has num_attention_heads,
    num_key_value_heads and head_dim (a ModelShape or a Hugging Face-style
    config). The one place that maps a model to its kernel's flags: the
    decoder, the GPU test and the device scripts all ask here."""
    return specialization_flags(
        shape.num_attention_heads // shape.num_key_value_heads, shape.head_dim)


def build_library(verbose=False, flags=()):
    """The path of libtawa_mega.so, built if this source version and these
    flags (`flags`, e.g. specialization_flags(...), then $TAWA_MEGA_NVCC_FLAGS,
    e.g. -DTAWA_MEGA_WARPS=8) have none yet. $TAWA_MEGA_LIB overrides it;
    $TAWA_CACHE_DIR (default ~/.cache/tawa) is where it is kept."""
    env_lib = os.environ.get('TAWA_MEGA_LIB')
    if env_lib:
        return env_lib
    root, includes = source_roots()
    cpp, cu, headers = _sources(root, includes)
    extra = list(flags) + os.environ.get('TAWA_MEGA_NVCC_FLAGS', '').split()
    digest = hashlib.sha256(' '.join(extra).encode())
    for path in cpp + [cu] + headers:
        digest.update(os.path.basename(path).encode())
        with open(path, 'rb') as f:
            digest.update(f.read())
    cache = os.environ.get('TAWA_CACHE_DIR', os.path.expanduser('~/.cache/tawa'))
    out_dir = os.path.join(cache, 'mega', digest.hexdigest()[:16])
    lib = os.path.join(out_dir, 'libtawa_mega.so')
    if os.path.isfile(lib):
        return lib
    os.makedirs(out_dir, exist_ok=True)
    nvcc = _nvcc()
    cuda_lib = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), 'lib64')
    inc_flags = [f'-I{d}' for d in includes]
    with tempfile.TemporaryDirectory(dir=out_dir) as tmp:
        jobs = [['g++', '-std=c++17', '-O2', '-fPIC', *inc_flags, '-c', src, '-o',
                 os.path.join(tmp, os.path.basename(src) + '.o')] for src in cpp]
        jobs.append([nvcc, '-gencode=arch=compute_90a,code=sm_90a', '-std=c++17', '-O3',
                     '-Xcompiler', '-fPIC', *inc_flags, *extra, '-c', cu, '-o',
                     os.path.join(tmp, 'MegaDecoder.o')])

        def run(cmd):
            try:
                r = subprocess.run(cmd, capture_output=True, text=True)
            except OSError as e:
                raise MegaError(f'building the mega-kernel library: cannot run {cmd[0]}: {e}')
            if r.returncode != 0:
                raise MegaError(f'building the mega-kernel library failed:\n{" ".join(cmd)}\n'
                                f'{r.stdout}{r.stderr}')
            if verbose:
                print(' '.join(cmd))

        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            list(pool.map(run, jobs))
        tmp_lib = os.path.join(tmp, 'libtawa_mega.so')
        run([nvcc, '-shared', '-cudart', 'shared', '-o', tmp_lib, *[j[-1] for j in jobs],
             f'-L{cuda_lib}', f'-Xlinker=-rpath,{cuda_lib}'])
        os.replace(tmp_lib, lib)
    return lib


def build_libraries(flag_sets, verbose=False):
    """build_library for each of `flag_sets` at once (each build is mostly
    one single-threaded nvcc); returns their paths in order."""
    flag_sets = [tuple(f) for f in flag_sets]
    with ThreadPoolExecutor(max_workers=max(1, len(flag_sets))) as pool:
        return list(pool.map(lambda f: build_library(verbose, f), flag_sets))

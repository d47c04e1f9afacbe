"""SM and memory clocks while decode mega-kernel steps run back to back.

    python3 bench/mega_clock_probe.py MODEL BATCH SECONDS    (e.g. 0.6b 1 4)

Builds the model shape with random weights at context 512, launches steps
back to back for SECONDS while nvidia-smi samples the SM and memory clocks,
power and clock-event reasons every 50 ms, and prints the step time and the
samples' range: whether the SM clock drops below its maximum during the
steps (run 342, H200: it does not).
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'python'))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch
import tawa.mega
from tawa.mega.reference import random_state_dict
from mega_decode_bench import MODELS

if len(sys.argv) != 4 or sys.argv[1] not in MODELS:
    sys.exit(f'usage: {sys.argv[0]} MODEL BATCH SECONDS (MODEL one of {", ".join(sorted(MODELS))})')
model_name, batch, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
cfg = dict(MODELS[model_name])
model = tawa.mega.compile(cfg, random_state_dict(cfg, seed=1), max_batch=batch, max_seq=512)
model.reserve(512)
k = model.step_kernel(batch)
k['positions'].fill_(511)
for _ in range(20):
    k.launch()
torch.cuda.synchronize()
log = f'/tmp/clocks-{model_name}-{batch}.csv'
smi = subprocess.Popen(['nvidia-smi', '--query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,'
                        'temperature.gpu,clocks_event_reasons.active', '--format=csv,noheader',
                        '-lms', '50'], stdout=open(log, 'w'))
time.sleep(0.5)
t0 = time.time(); steps = 0
ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
ev0.record()
while time.time() - t0 < seconds:
    for _ in range(50):
        k.launch()
    steps += 50
    torch.cuda.synchronize()
ev1.record(); torch.cuda.synchronize()
time.sleep(0.3)
smi.terminate(); smi.wait()
print(f'{model_name} batch {batch}: {steps} steps, {ev0.elapsed_time(ev1) * 1e3 / steps:.1f} us a step')
rows = [l.strip().split(', ') for l in open(log) if l.strip()]
sm = [int(r[1].split()[0]) for r in rows]; mem = [int(r[2].split()[0]) for r in rows]
pw = [float(r[3].split()[0]) for r in rows if r[3].split()[0].replace('.', '').isdigit()]
reasons = sorted(set(r[5] for r in rows))
print(f'  {len(rows)} samples: SM MHz min {min(sm)} median {sorted(sm)[len(sm)//2]} max {max(sm)}; '
      f'mem MHz {min(mem)}..{max(mem)}; power W {min(pw):.0f}..{max(pw):.0f}; reasons {reasons}')

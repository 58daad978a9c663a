"""Where WatermarkPredictor.predict's time goes on a GPU (a diagnostic, not a benchmark).

Run on a lent machine after scripts/gpu_prepare.sh (see scripts/gpu_checks.sh for the set-up):
``python3 scripts/gpu_watermark_breakdown.py cuda``; ``cpu`` for a dry run. Its December 2026
numbers on an H200, quoted in docs/watermark.md, were taken before ``predict`` sent images as
bytes and turned TF32 off: host-side stacking 0.34 ms an image, the network 0.09-0.16 ms for
both views, and TF32 moving scores by 2.4e-3 from the CPU's.
"""

import copy
import sys
import time

import numpy as np
import torch

from trustlab.watermark.checkpoints import load_checkpoint
from trustlab.watermark.nr import _stack, as_images
from trustlab.watermark.synth import synthesize

dev = sys.argv[1] if len(sys.argv) > 1 else "cuda"
N, BS = (512, 64) if dev == "cuda" else (16, 8)
sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
m = load_checkpoint()
imgs = as_images(synthesize(N, random_state=8).images)


def t(f, reps=3):
    f()
    sync()
    best = 1e9
    for _ in range(reps):
        s = time.perf_counter()
        f()
        sync()
        best = min(best, time.perf_counter() - s)
    return best


def ms(sec):
    return f"{1000 * sec / N:.3f} ms/image"


print("as_images:", ms(t(lambda: as_images(imgs))))
print(
    "_stack (CPU, float):", ms(t(lambda: [_stack(imgs[s : s + BS], 256) for s in range(0, N, BS)]))
)
print("np.stack uint8:", ms(t(lambda: [np.stack(imgs[s : s + BS]) for s in range(0, N, BS)])))
xs = [_stack(imgs[s : s + BS], 256) for s in range(0, N, BS)]
us = [torch.from_numpy(np.stack(imgs[s : s + BS])) for s in range(0, N, BS)]
print("H2D float:", ms(t(lambda: [x.to(dev) for x in xs])))
print(
    "H2D uint8 + float/255 on device:",
    ms(t(lambda: [u.to(dev).permute(0, 3, 1, 2).float().div_(255) for u in us])),
)
gx = [x.to(dev) for x in xs]
for layout in ("channels_last", "contiguous"):
    for tf32 in (True, False):
        for bench in (False, True):
            torch.backends.cudnn.allow_tf32 = tf32
            torch.backends.cuda.matmul.allow_tf32 = tf32
            torch.backends.cudnn.benchmark = bench
            fmt = torch.channels_last if layout == "channels_last" else torch.contiguous_format
            net = copy.deepcopy(m.net_).to(dev).to(memory_format=fmt)

            def fwd(net=net, fmt=fmt):
                with torch.inference_mode():
                    for x in gx:
                        x = x.contiguous(memory_format=fmt)
                        net(x)
                        net(x.flip(-1))

            print(f"network, 2 views, {layout}, tf32={tf32}, cudnn.benchmark={bench}:", ms(t(fwd)))
torch.backends.cudnn.allow_tf32 = True
torch.backends.cudnn.benchmark = False
net = copy.deepcopy(m.net_).to(dev).to(memory_format=torch.channels_last)


def readout():
    with torch.inference_mode():
        for x in gx:
            m._readout(net, x.contiguous(memory_format=torch.channels_last), mirror=False)
            m._readout(net, x.contiguous(memory_format=torch.channels_last).flip(-1), mirror=True)


print("network + _readout (to numpy), 2 views:", ms(t(readout)))
total = t(lambda: m.predict(imgs, batch_size=BS, device=dev))
print(f"predict total (bs {BS}):", ms(total), f"= {N / total:.0f} images/s")
cpu = m.predict(imgs[:64], batch_size=8)
for tf32 in (True, False):
    torch.backends.cudnn.allow_tf32 = tf32
    g = m.predict(imgs[:64], batch_size=BS, device=dev)
    print(
        f"max |score GPU - CPU| tf32={tf32}: {np.abs(g.scores - cpu.scores).max():.2e}, levels equal {g.levels == cpu.levels}"
    )
torch.backends.cudnn.allow_tf32 = False
print("predict total tf32 off:", ms(t(lambda: m.predict(imgs, batch_size=BS, device=dev))))

# A 4K (3840x2160) 10-bit 4:2:2 Y4M clip of moving gradients with noise, for
# the sequence figures of docs/perf/codec.md: python3 scripts/gen_y4m.py OUT.y4m FRAMES
import sys, numpy as np
w, h, n = 3840, 2160, int(sys.argv[2])
rng = np.random.default_rng(1)
yy, xx = np.mgrid[0:h, 0:w]
with open(sys.argv[1], "wb") as f:
    f.write(b"YUV4MPEG2 W3840 H2160 F60:1 Ip A1:1 C422p10\n")
    for k in range(n):
        y = (200 + 600 * (0.5 + 0.5 * np.sin((xx + 7 * k) / 300.0) * np.cos(yy / 200.0)) + rng.normal(0, 4, (h, w))).clip(0, 1023).astype("<u2")
        c = ((512 + 300 * np.sin((xx[:, ::2] * 2 + 5 * k) / 500.0)) + rng.normal(0, 2, (h, w // 2))).clip(0, 1023).astype("<u2")
        f.write(b"FRAME\n"); f.write(y.tobytes()); f.write(c.tobytes()); f.write((1023 - c).tobytes())

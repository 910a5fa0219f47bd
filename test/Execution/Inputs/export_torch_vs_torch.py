"""Exports tools/export_torch.py's CausalBlock (a 0/-inf causal mask buffer
and a batch norm) with its loss, trains it with amp-run and with PyTorch on
the same batches, and compares every step's loss.

usage: export_torch_vs_torch.py AMP_RUN TOOLS_DIR WORK_DIR

PyTorch trains the module as it was before the export (SGD, lr 0.05, in
training mode). The mask must stay a buffer: as a weight its zeros would be
trained, and ampc refuses to train a weight that starts -inf. Prints one PASS or
FAIL line per step and the ampc.frozen names; exits 1 on a failure.
"""
import copy
import os
import sys

import torch
from torch_test_data import train_and_compare

amp_run, tools, work = sys.argv[1:4]
sys.path.insert(0, tools)
import export_torch  # noqa: E402

STEPS, BATCH, LR = 3, 4, 0.05
torch.manual_seed(0)
module = export_torch.CausalBlock()
reference = copy.deepcopy(module)
x = torch.randn(STEPS * BATCH, 6, 8)
labels = torch.randint(0, 4, (STEPS * BATCH,))
path = os.path.join(work, "block.onnx")
frozen = export_torch.export(module, torch.nn.functional.cross_entropy,
                             (x[:BATCH], labels[:BATCH]), path)
print("ampc.frozen:", ",".join(frozen))
ok = train_and_compare(amp_run, path, reference, x, labels, STEPS, BATCH, LR,
                       work)
sys.exit(0 if ok else 1)

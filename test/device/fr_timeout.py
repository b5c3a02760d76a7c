"""A real NCCL collective timeout on 2 GPUs, for the Flight Recorder: both ranks all_reduce a few
times, then rank 1 sleeps while rank 0 enters one more all_reduce. The process group's timeout is
short (NSA_FR_TIMEOUT_S, default 20 s), so rank 0's NCCL watchdog times out, and with
TORCH_NCCL_TRACE_BUFFER_SIZE and TORCH_NCCL_DUMP_ON_TIMEOUT set it dumps the Flight Recorder of each
rank to TORCH_NCCL_DEBUG_INFO_TEMP_FILE<rank>. Run under torchrun --nproc_per_node 2."""

import datetime
import os
import time

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=float(os.environ.get("NSA_FR_TIMEOUT_S", "20"))))
x = torch.ones(1 << 20, device="cuda")
for step in range(1, 6):
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print(f"step {step:04d} | loss {1.0 / step:.4f} | lr 1.00e-04 | toks/s 1000", flush=True)
if rank == 1:
    time.sleep(float(os.environ.get("NSA_FR_SLEEP_S", "90")))
dist.all_reduce(x)  # rank 1 is not there: rank 0's watchdog times out
torch.cuda.synchronize()
print("unreachable on rank 0", flush=True)

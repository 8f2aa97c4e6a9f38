"""Programs whose CUDA work runs in child processes, as jobs start it:
  jobs.py subprocess   runs ./vecadd through subprocess (descriptors
                       closed, as subprocess closes them)
  jobs.py spawn N      N workers started by torch.multiprocessing.spawn
                       (fresh interpreters), each an add and a relu on
                       GPU rank % devices
  jobs.py ddp          two workers, one GPU each: NCCL all-reduce and a
                       DistributedDataParallel step (needs two GPUs)
The parent prints the workers' lines in rank order once they are done (a
deterministic summary); a worker's failure fails the job; exit 3 where
the machine lacks the GPUs (the test is skipped)."""
import os
import subprocess
import sys
import tempfile


def report(out, rank, line):
    with open(os.path.join(out, f"{rank}.txt"), "w") as f:
        f.write(line + "\n")


def eltwise(rank, n, out):
    import torch
    torch.cuda.set_device(rank % torch.cuda.device_count())
    x = torch.arange(1 << 20, device="cuda", dtype=torch.float32)
    z = torch.relu(x + float(rank) - 1000.0)
    torch.cuda.synchronize()
    report(out, rank, f"worker {rank}: positive {int((z > 0).sum())}")


def ddp(rank, n, out):
    import torch
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29533")
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", rank=rank, world_size=n)
    t = torch.full((1 << 16,), float(rank + 1), device="cuda")
    dist.all_reduce(t)
    torch.manual_seed(0)
    model = torch.nn.parallel.DistributedDataParallel(
        torch.nn.Linear(256, 256).cuda(), device_ids=[rank])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    x = torch.ones(64, 256, device="cuda") * (rank + 1)
    model(x).sum().backward()
    opt.step()
    torch.cuda.synchronize()
    w = float(model.module.weight.double().sum())
    report(out, rank, f"worker {rank}: all_reduce {float(t[0])} weight sum {w:.4f}")
    dist.destroy_process_group()


def main():
    mode = sys.argv[1] if len(sys.argv) > 1 else "subprocess"
    if mode == "subprocess":
        here = os.path.dirname(os.path.abspath(__file__))
        sys.exit(subprocess.run([os.path.join(here, "vecadd")]).returncode)
    import torch
    import torch.multiprocessing as mp
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    if mode == "ddp" and torch.cuda.device_count() < n:
        print(f"jobs.py: ddp needs {n} GPUs, this machine has {torch.cuda.device_count()}",
              file=sys.stderr)
        sys.exit(3)
    if mode not in ("spawn", "ddp"):
        sys.exit(f"jobs.py: unknown mode {mode}")
    with tempfile.TemporaryDirectory() as out:
        mp.spawn(eltwise if mode == "spawn" else ddp, args=(n, out), nprocs=n, join=True)
        for rank in range(n):
            with open(os.path.join(out, f"{rank}.txt")) as f:
                print(f.read(), end="")


if __name__ == "__main__":
    main()

"""The shard tasks of `laser mine` (`laser.distributed.mine_tasks`) on Ray: each task a Ray task of
`threads` CPUs reading and writing the shared work directory; a task lost with its node is run
again elsewhere (the tasks are idempotent), and the driver records each finished one, with the
node it ran on, in its stage's manifest. Ray is imported inside functions only."""
from __future__ import annotations

from typing import Callable

from .workdir import Runner, Task, timed
from .ray_runner import RayOptions, ray_result, ray_runtime
from .work import pin_threads


def _run_task(task: Task, threads: int) -> tuple[dict, float]:
    """A task in a Ray worker, its threads pinned to its CPUs; its record names the node it ran
    on (`node`: Ray's node id)."""
    import ray
    pin_threads(threads)
    record, cpu_s = timed(task)
    return {**record, "node": ray.get_runtime_context().get_node_id()}, cpu_s


def ray_runner(options: RayOptions) -> Runner:
    """Run a stage's tasks on Ray, `options.workers` at a time (default: all submitted at once,
    Ray queues them by free CPUs), each retried `options.retries` times when its worker or node
    dies."""
    def run(tasks: list, done: Callable[[Task, dict, float], None]) -> None:
        import ray
        with ray_runtime(options.address):
            remote = ray.remote(_run_task).options(num_cpus=options.threads,
                                                    max_retries=options.retries)
            waiting, pending = list(reversed(tasks)), {}
            try:
                while waiting or pending:
                    while waiting and len(pending) < (options.workers or len(tasks)):
                        task = waiting.pop()
                        pending[remote.remote(task, options.threads)] = task
                    [ready], _ = ray.wait(list(pending), num_returns=1)
                    task = pending.pop(ready)
                    done(task, *ray_result(ready))
            finally:
                for reference in pending:
                    ray.cancel(reference)
    return run

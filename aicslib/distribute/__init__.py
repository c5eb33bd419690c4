"""``aicslib.distribute``: training on several devices and several processes (exercise 5.3).

* In one process, several logical devices: ``ConfigProto(device_count={"CPU": 4})``,
  ``with aics.device('/CPU:1')``; a graph replicated per device (``towers``) and
  its gradients averaged, as TF1's multi-GPU tower pattern; nodes on different
  devices run concurrently (``framework/parallel_executor.py``).
* Across processes, over MPI (``mpi4py``, the ``[mpi]`` extra): ``init``,
  ``broadcast_variables``, gradient allreduce (``allreduce``: MPI's own;
  ``ring_allreduce``: the textbook algorithm on Send/Recv), ``DistributedGradientTape``;
  jobs start with ``python -m aicslib.distribute.launch -n 4 script.py``.
* Model parallelism: ``pipeline`` splits a network's layers into stages on
  different devices and pipelines micro-batches through them (GPipe);
  ``pipeline_mpi`` does the same with one stage per MPI process.
* ``comm_model``: the alpha-beta cost model of communication, to extrapolate.

Nothing here imports mpi4py until an MPI function is called.
"""
from .collective_ops import allreduce, broadcast
from .data_parallel import DistributedGradientTape, allreduce_gradients, broadcast_variables
from .mpi import MISSING_MPI, init, rank, size
from .ring import ring_allreduce, simulate_ring_allreduce
from .towers import average_gradients, split_batch

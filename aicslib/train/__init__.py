"""aics.train: optimizers, checkpoints, queue runners (TF's python/training).

Optimizers follow TensorFlow 1.x exactly (names, defaults, update rules):
``GradientDescentOptimizer``, ``MomentumOptimizer``, ``AdamOptimizer``,
``AdagradOptimizer``, ``AdadeltaOptimizer``, ``RMSPropOptimizer``. Each has
``minimize = compute_gradients + apply_gradients`` and works in a graph (it
returns a train op) and eagerly (it updates the variables at once).
"""
from ..ops import training_ops as _training_ops
from ..ops import data_flow_ops as _data_flow_ops
from ..ops.data_flow_ops import FIFOQueue, QueueBase, RandomShuffleQueue
from .coordinator import Coordinator, LooperThread
from .queue_runner_impl import QueueRunner, add_queue_runner, start_queue_runners
from .input import batch, shuffle_batch
from .saver import (CheckpointState, Saver, checkpoint_exists, get_checkpoint_state,
                    latest_checkpoint, list_variables, load_checkpoint, load_variable)
from .checkpoint import Checkpoint, CheckpointLoadStatus
from .checkpoint_management import CheckpointManager
from .optimizer import Optimizer
from .gradient_descent import GradientDescentOptimizer
from .momentum import MomentumOptimizer
from .adam import AdamOptimizer
from .adagrad import AdagradOptimizer
from .adadelta import AdadeltaOptimizer
from .rmsprop import RMSPropOptimizer
from ..ops.init_ops import (compute_fans, constant_initializer, glorot_normal_initializer,
                            glorot_uniform_initializer, he_normal, he_uniform, lecun_normal,
                            lecun_uniform, ones_initializer, orthogonal_initializer,
                            random_normal_initializer, random_uniform_initializer,
                            truncated_normal_initializer, variance_scaling_initializer,
                            zeros_initializer)
from .training_util import (create_global_step, get_global_step, get_or_create_global_step,
                            global_step)
from .session_run_hook import SessionRunArgs, SessionRunContext, SessionRunHook, SessionRunValues
from .basic_session_run_hooks import (CheckpointSaverHook, CheckpointSaverListener, FeedFnHook,
                                      FinalOpsHook, LoggingTensorHook, NanLossDuringTrainingError,
                                      NanTensorHook, SecondOrStepTimer, StepCounterHook,
                                      StopAtStepHook, SummarySaverHook)
from .monitored_session import (ChiefSessionCreator, MonitoredSession, MonitoredTrainingSession,
                                Scaffold, SessionCreator, SingularMonitoredSession,
                                WorkerSessionCreator)


__all__ = [
    # optimizers and the global step
    "Optimizer", "GradientDescentOptimizer", "MomentumOptimizer", "AdamOptimizer",
    "AdagradOptimizer", "AdadeltaOptimizer", "RMSPropOptimizer", "create_global_step",
    "get_global_step", "get_or_create_global_step", "global_step",
    # checkpoints
    "Saver", "Checkpoint", "CheckpointManager", "CheckpointState", "CheckpointLoadStatus", "checkpoint_exists",
    "get_checkpoint_state", "latest_checkpoint", "list_variables", "load_checkpoint",
    "load_variable",
    # monitored training: sessions and hooks (TF1)
    "MonitoredSession", "MonitoredTrainingSession", "SingularMonitoredSession", "Scaffold",
    "SessionCreator", "ChiefSessionCreator", "WorkerSessionCreator", "SessionRunHook",
    "SessionRunArgs", "SessionRunContext", "SessionRunValues", "StopAtStepHook",
    "LoggingTensorHook", "CheckpointSaverHook", "CheckpointSaverListener", "StepCounterHook",
    "SummarySaverHook", "NanTensorHook", "NanLossDuringTrainingError", "FeedFnHook",
    "FinalOpsHook", "SecondOrStepTimer",
    # queues and the threads that feed them
    "FIFOQueue", "RandomShuffleQueue", "QueueBase", "Coordinator", "LooperThread",
    "QueueRunner", "add_queue_runner", "start_queue_runners", "batch", "shuffle_batch",
    # initializers (TF 1.x names)
    "compute_fans", "constant_initializer", "glorot_normal_initializer",
    "glorot_uniform_initializer", "he_normal", "he_uniform", "lecun_normal", "lecun_uniform",
    "ones_initializer", "orthogonal_initializer", "random_normal_initializer",
    "random_uniform_initializer", "truncated_normal_initializer",
    "variance_scaling_initializer", "zeros_initializer",
]

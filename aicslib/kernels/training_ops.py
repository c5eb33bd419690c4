"""CPU kernels of the optimizer update ops (TF's core/kernels/training_ops.cc).

Each kernel reads the variable and its slots and computes the TF 1.x update in
the variable's dtype. Gradient descent, momentum and Adam update in place
through ``VariableStorage.writable_value`` (copy-on-write: a copy when a read
of the old value is still held); the others store fresh read-only arrays.
Either way a value read earlier stays a stable snapshot. ``use_locking`` takes the
variable's lock around the read-modify-write (TF's default is lock-free
"Hogwild" updates; here the lock is cheap, so it is always taken).
"""
import numpy as np

from ..framework.dtypes import bfloat16, float16, float32, float64
from ..framework.errors import InvalidArgumentError
from ..framework.kernel_registry import register_kernel

FLOAT = {"T": [float16, bfloat16, float32, float64]}


def _check(op, var, grad, *slots):
    v = var.read()
    if v.shape != grad.shape:
        raise InvalidArgumentError(
            None, None, f"{op}: var and grad do not have the same shape: variable "
            f"'{var.name}' has shape {list(v.shape)}, grad has shape {list(grad.shape)}")
    for s in slots:
        sv = s.read()
        if sv.shape != v.shape:
            raise InvalidArgumentError(
                None, None, f"{op}: var and slot '{s.name}' do not have the same shape: "
                f"{list(v.shape)} vs {list(sv.shape)}")
    return v


def _store(storage, value, dtype):
    value = np.asarray(value, dtype=dtype)
    value.flags.writeable = False
    storage.assign(value)


@register_kernel("ResourceApplyGradientDescent", type_constraint=FLOAT)
def _apply_gradient_descent(var, alpha, delta):
    with var.lock:
        _check("ResourceApplyGradientDescent", var, delta)
        w = var.writable_value()      # in place unless a snapshot of w is still held
        w -= alpha * delta
        var.store_updated(w)


def momentum_update(w, a, grad, lr, momentum, use_nesterov):
    """TF's momentum rule on arrays, in place: ``a = a * momentum + grad``, then
    ``w -= a * lr`` (Nesterov: ``w -= grad * lr + a * (momentum * lr)``)."""
    a *= momentum
    a += grad
    if use_nesterov:
        w -= grad * lr + a * (momentum * lr)
    else:
        w -= a * lr


def apply_momentum(var, accum, lr, grad, momentum, use_nesterov=False, update=momentum_update):
    """ResourceApplyMomentum: the shapes checked, ``update`` (:func:`momentum_update`, or the
    speed layer's) run on the variable's and accumulator's values under the variable's lock."""
    with var.lock:
        _check("ResourceApplyMomentum", var, grad, accum)
        a = accum.writable_value()
        w = var.writable_value()
        update(w, a, grad, lr, momentum, use_nesterov)
        accum.store_updated(a)
        var.store_updated(w)


@register_kernel("ResourceApplyMomentum", type_constraint=FLOAT)
def _apply_momentum(var, accum, lr, grad, momentum, use_nesterov=False):
    apply_momentum(var, accum, lr, grad, momentum, use_nesterov)


@register_kernel("ResourceApplyAdam", type_constraint=FLOAT)
def _apply_adam(var, m, v, beta1_power, beta2_power, lr, beta1, beta2, epsilon, grad,
                use_nesterov=False):
    with var.lock:
        _check("ResourceApplyAdam", var, grad, m, v)
        w = var.writable_value()
        dt = w.dtype
        one = dt.type(1)
        lr_t = lr * np.sqrt(one - beta2_power) / (one - beta1_power)
        m_new = m.writable_value()
        m_new += (grad - m_new) * (one - beta1)            # m = m + (g - m)(1 - beta1)
        v_new = v.writable_value()
        v_new += (grad * grad - v_new) * (one - beta2)     # v = v + (g^2 - v)(1 - beta2)
        if use_nesterov:
            w -= lr_t * (m_new * beta1 + (one - beta1) * grad) / (np.sqrt(v_new) + epsilon)
        else:
            w -= lr_t * m_new / (np.sqrt(v_new) + epsilon)
        m.store_updated(m_new)
        v.store_updated(v_new)
        var.store_updated(w)


@register_kernel("ResourceApplyAdagrad", type_constraint=FLOAT)
def _apply_adagrad(var, accum, lr, grad, update_slots=True):
    with var.lock:
        w = _check("ResourceApplyAdagrad", var, grad, accum)
        a = accum.read()
        if update_slots:
            a = a + grad * grad
            _store(accum, a, w.dtype)
        _store(var, w - lr * grad / np.sqrt(a), w.dtype)


@register_kernel("ResourceApplyAdadelta", type_constraint=FLOAT)
def _apply_adadelta(var, accum, accum_update, lr, rho, epsilon, grad):
    with var.lock:
        w = _check("ResourceApplyAdadelta", var, grad, accum, accum_update)
        one = w.dtype.type(1)
        a = accum.read() * rho + grad * grad * (one - rho)
        au = accum_update.read()
        update = np.sqrt(au + epsilon) / np.sqrt(a + epsilon) * grad
        au = au * rho + update * update * (one - rho)
        _store(accum, a, w.dtype)
        _store(accum_update, au, w.dtype)
        _store(var, w - update * lr, w.dtype)


@register_kernel("ResourceApplyRMSProp", type_constraint=FLOAT)
def _apply_rmsprop(var, ms, mom, lr, rho, momentum, epsilon, grad):
    with var.lock:
        w = _check("ResourceApplyRMSProp", var, grad, ms, mom)
        one = w.dtype.type(1)
        ms_new = ms.read() + (grad * grad - ms.read()) * (one - rho)
        mom_new = mom.read() * momentum + lr * grad / np.sqrt(ms_new + epsilon)
        _store(ms, ms_new, w.dtype)
        _store(mom, mom_new, w.dtype)
        _store(var, w - mom_new, w.dtype)


@register_kernel("ResourceApplyCenteredRMSProp", type_constraint=FLOAT)
def _apply_centered_rmsprop(var, mg, ms, mom, lr, rho, momentum, epsilon, grad):
    with var.lock:
        w = _check("ResourceApplyCenteredRMSProp", var, grad, mg, ms, mom)
        one = w.dtype.type(1)
        ms_new = ms.read() + (grad * grad - ms.read()) * (one - rho)
        mg_new = mg.read() + (grad - mg.read()) * (one - rho)
        denom = ms_new - mg_new * mg_new + epsilon
        mom_new = mom.read() * momentum + lr * grad / np.sqrt(denom)
        _store(ms, ms_new, w.dtype)
        _store(mg, mg_new, w.dtype)
        _store(mom, mom_new, w.dtype)
        _store(var, w - mom_new, w.dtype)
